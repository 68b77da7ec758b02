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
  /// How far a chunked body has been read.
  var chunked: Chunked?

  /// How far a chunked body has been read: what is being read, where it starts, how far the
  /// search for the end of the line being read has looked, and the chunks and trailer lines read.
  struct Chunked: Sendable {
    /// What is being read.
    enum Step: Sendable {
      /// A chunk-size line.
      case sizeLine
      /// A chunk's data (and the CRLF after it), its size read.
      case data(size: Int)
      /// The trailer, which starts at `start`, after the last chunk.
      case trailer(start: Int)
    }

    var step = Step.sizeLine
    /// Where the line or the data being read starts.
    private(set) var index: Int
    /// How far the search for the end of the line being read has looked.
    var searched: Int
    /// The chunks' data read so far.
    var chunks: [Range<Int>] = []
    /// The trailer's lines read so far.
    var trailer: [Range<Int>] = []

    /// A body whose first chunk-size line starts at `start`.
    init(at start: Int) {
      index = start
      searched = start
    }

    /// Go on to what starts at `index`.
    mutating func move(to index: Int) {
      self.index = index
      searched = index
    }
  }

  /// Nothing read yet: for each new request.
  package init() {}
}
