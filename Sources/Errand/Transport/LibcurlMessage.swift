import Foundation

/// What libcurl's own words about a failure say that its result code does not. Both transports
/// that drive libcurl read them here: URLSession on Linux reports many failures as
/// `URLError(.unknown)` with libcurl's message, and `CurlTransport` gets the message beside a
/// code that is too broad (a receive error for broken chunked framing).
package enum LibcurlMessage {
  /// The `URLError` code that a failure with this message is, the same through either transport;
  /// `nil` when the words add nothing.
  ///
  /// A body cut short ("transfer closed with N bytes remaining to read") is a lost connection; a
  /// body that does not decode as its `Content-Encoding` says ("content unencoding") cannot be
  /// decoded; broken chunked framing is a bad server response; a server certificate that does
  /// not verify ("SSL certificate problem", a name that does not match) is untrusted, as on
  /// Apple platforms; the server's TLS alert that it wants a client certificate, or refuses the
  /// one presented, is `clientCertificateRequired` or `clientCertificateRejected`; a proxy that refuses the tunnel to the server ("CONNECT tunnel failed")
  /// means the server cannot be reached.
  package static func code(for message: String) -> URLError.Code? {
    let message = message.lowercased()
    if message.contains("transfer closed") || message.contains("remaining to read") {
      return .networkConnectionLost
    }
    if message.contains("content unencoding") {
      return .cannotDecodeContentData
    }
    if message.contains("chunk") {
      return .badServerResponse
    }
    if message.contains("ssl certificate problem")
      || message.contains("no alternative certificate subject name")
    {
      return .serverCertificateUntrusted
    }
    // The server's TLS alerts about the client's certificate: none was presented (TLS 1.3's
    // `certificate_required`), or the one presented was refused.
    if message.contains("alert certificate required") {
      return .clientCertificateRequired
    }
    if message.contains("alert bad certificate") || message.contains("alert unknown ca")
      || message.contains("alert certificate unknown")
    {
      return .clientCertificateRejected
    }
    if message.contains("connect tunnel failed") {
      return .cannotConnectToHost
    }
    return nil
  }
}
