import Errand
import ErrandStubs
import Foundation

/// What a server that serves a transport does on its socket when the transport throws instead of
/// answering, or while the body streams: the nearest thing a socket can say to what the error
/// means in-process. The table is in `LoopbackServer.init(serving:standingInFor:redaction:maximumConnections:)`.
enum SocketFault: Equatable, Sendable {
  /// Answer with this status and text (a report, redacted), then close.
  case answer(status: Int, text: String)
  /// Reset the connection (RST): the client sees the connection reset.
  case reset
  /// Close the connection in an orderly way without (the rest of) an answer.
  case close
  /// Send nothing more until the client leaves or the server stops: the client's own deadline
  /// ends its call.
  case stall
  /// Send bytes that are not an HTTP response, then close.
  case notHTTP

  /// The fault for `error`, thrown before the head, in answer to `request`: reports and messages
  /// have every secret of the request (by its `redaction`) scrubbed, since they go to another
  /// process.
  static func beforeHead(_ error: any Error, answering request: HTTPRequest) -> SocketFault {
    switch error {
    case let unmatched as UnmatchedRequest:
      return .answer(status: 501, text: scrubbed(unmatched.description, of: request))
    case let cassette as CassetteError:
      if case .noMatch = cassette {
        return .answer(status: 501, text: scrubbed(cassette.description, of: request))
      }
      return .answer(status: 500, text: scrubbed(cassette.description, of: request))
    case let urlError as URLError:
      return fault(for: urlError.code)
    case let apiError as APIError:
      switch apiError {
      case .timedOut: return .stall
      case .cancelled: return .close
      case .invalidRequest(let reason):
        return .answer(
          status: 400,
          text: scrubbed("The served transport refused the request: \(reason)", of: request))
      case .transport(let underlying):
        return beforeHead(underlying, answering: request)
      case .unacceptableStatus, .decoding:
        return failed(apiError, answering: request)
      }
    case is CancellationError:
      return .close
    default:
      return failed(error, answering: request)
    }
  }

  /// The fault for `error`, thrown after the head was sent: a timeout stalls (the client's
  /// deadline ends its call, as in-process); anything else drops the connection mid-body, in an
  /// orderly way, so the client reads every byte sent before the drop.
  static func midBody(_ error: any Error) -> SocketFault {
    switch error {
    case let urlError as URLError where urlError.code == .timedOut: .stall
    case let apiError as APIError where apiError.kind == .timedOut: .stall
    default: .close
    }
  }

  /// What a `URLError` thrown before any answer becomes.
  private static func fault(for code: URLError.Code) -> SocketFault {
    switch code {
    case .timedOut: .stall
    case .networkConnectionLost: .reset
    case .badServerResponse, .cannotParseResponse: .notHTTP
    default: .close
    }
  }

  /// A `500` naming an error that no socket behaviour stands for (a handler that threw, a
  /// fixture that is missing).
  private static func failed(_ error: any Error, answering request: HTTPRequest) -> SocketFault {
    .answer(
      status: 500,
      text: scrubbed(
        "The served transport threw instead of answering \(request): \(String(describing: error))",
        of: request))
  }

  /// `text` without the secrets `request` carries, as its redaction names them, cut to 16 KB.
  static func scrubbed(_ text: String, of request: HTTPRequest) -> String {
    let values = request.redaction.secretValues(in: request)
    let scrubbed = Redaction.scrub(values, from: Data(text.utf8))
    return String(decoding: scrubbed.prefix(16 * 1024), as: UTF8.self)
  }
}
