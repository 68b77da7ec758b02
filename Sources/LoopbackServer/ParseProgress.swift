import Errand

/// Where the parse of a request that was not whole yet stopped, so that the parse of the same
/// bytes with more after them goes on from there instead of reading them all again: the server
/// reads a request in as many pieces as the client sends it.
package struct ParseProgress: Sendable {
  /// A request's head, once read.
  struct Head: Sendable {
    let method: String
    let target: String
    let version: String
    let headers: HTTPHeaders
    /// Where the body starts, after the head's empty line.
    let bodyStart: Int
    /// Whether the client waits for `100 Continue` before it sends the body.
    let expectsContinue: Bool
  }

  /// How far the search for the head's end has looked without finding it.
  var headSearched = 0
  /// The head, once read whole.
  var head: Head?
  /// Where the chunk-size line of a chunked body's next chunk starts, once one has been read.
  var nextChunk: Int?
  /// The chunks of a chunked body read so far.
  var chunks: [Range<Int>] = []

  /// Nothing read yet: for each new request.
  package init() {}
}
