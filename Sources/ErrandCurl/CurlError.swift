#if os(Linux)
  import Errand
  import Foundation
  import FoundationNetworking

  /// libcurl refused an option CurlTransport sets: the transfer is not started, since running it
  /// without that option (the http/https-only restriction, a size, a callback) is not safe.
  struct CurlOptionRefused: Error, LocalizedError, Hashable {
    /// The option's name, for example `CURLOPT_PROTOCOLS_STR`.
    var option: String
    /// libcurl's `CURLcode`.
    var code: Int32
    /// libcurl's words for the code.
    var reason: String

    var errorDescription: String? {
      "libcurl refused \(option) (CURLcode \(code): \(reason)); CurlTransport did not start the "
        + "transfer without it"
    }
  }

  /// libcurl's result codes, as the `URLError` that `URLSessionTransport` reports for the same
  /// fault, so that `APIError` kinds and messages do not depend on the transport.
  enum CurlError {
    /// The `URLError` for a failed transfer.
    /// - Parameters:
    ///   - code: libcurl's `CURLcode`.
    ///   - message: libcurl's own words (its error buffer), kept as the description.
    ///   - url: The URL that failed.
    /// - Returns: The error, with libcurl's words and the URL in its user info.
    static func urlError(code: Int32, message: String, url: URL) -> URLError {
      var info: [String: Any] = [NSURLErrorFailingURLErrorKey: url]
      info[NSLocalizedDescriptionKey] = message.isEmpty ? nil : message
      return URLError(urlErrorCode(code, message: message), userInfo: info)
    }

    /// The code for a result: what libcurl's words say (``LibcurlMessage``, as
    /// `URLSessionTransport` reads them), else what its code says.
    static func urlErrorCode(_ code: Int32, message: String) -> URLError.Code {
      LibcurlMessage.code(for: message) ?? urlErrorCode(code)
    }

    static func urlErrorCode(_ code: Int32) -> URLError.Code {
      switch code {
      case 3: .badURL  // URL_MALFORMAT
      case 5, 6: .cannotFindHost  // COULDNT_RESOLVE_PROXY, COULDNT_RESOLVE_HOST
      case 7: .cannotConnectToHost  // COULDNT_CONNECT
      case 1, 8, 52: .badServerResponse  // UNSUPPORTED_PROTOCOL, WEIRD_SERVER_REPLY, GOT_NOTHING
      case 16, 18, 55, 56, 92: .networkConnectionLost  // HTTP2, PARTIAL_FILE, SEND/RECV_ERROR
      case 26: .cannotOpenFile  // READ_ERROR: the file to upload could not be read
      case 28: .timedOut  // OPERATION_TIMEDOUT
      case 35, 59, 66, 77, 80, 83: .secureConnectionFailed  // TLS handshake, ciphers, CA file
      case 58: .clientCertificateRejected  // SSL_CERTPROBLEM
      case 60: .serverCertificateUntrusted  // PEER_FAILED_VERIFICATION
      case 61: .cannotDecodeContentData  // BAD_CONTENT_ENCODING
      case 63: .dataLengthExceedsMaximum  // FILESIZE_EXCEEDED
      case 47: .httpTooManyRedirects  // TOO_MANY_REDIRECTS
      default: .unknown
      }
    }
  }
#endif
