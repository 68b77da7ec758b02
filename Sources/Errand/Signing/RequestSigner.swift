import Foundation

/// Signs a request: adds what proves who sent it and that it was not changed on the way (a
/// signature over the method, URL, chosen headers and body, and the time).
///
/// Errand ships ``AWSSignatureV4``; a scheme of your own is a small type:
///
/// ```swift
/// /// HMAC-SHA256 over "METHOD\nPATH\nTIMESTAMP\nSHA256(BODY)", as a partner API asks.
/// struct PartnerSigner: RequestSigner {
///   let keyID: String
///   let secret: Data
///   func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest {
///     var request = request
///     let timestamp = String(Int(date.timeIntervalSince1970))
///     let canonical = [
///       request.method.rawValue, request.url.path(percentEncoded: true), timestamp,
///       try RequestSigning.sha256Hex(of: request),
///     ].joined(separator: "\n")
///     let signature = RequestSigning.hmacSHA256(key: secret, Data(canonical.utf8))
///     request.headers["X-Timestamp"] = timestamp
///     request.headers["X-Signature"] = "\(keyID):\(signature.base64EncodedString())"
///     return request
///   }
/// }
/// ```
///
/// Sign in the middleware closest to the transport, so that nothing changes the request after
/// its signature:
///
/// ```swift
/// struct Signing: Middleware {
///   let signer: any RequestSigner
///   func intercept(
///     _ request: HTTPRequest, next: @Sendable (HTTPRequest) async throws -> HTTPResponse
///   ) async throws -> HTTPResponse {
///     try await next(signer.sign(request, at: Date()))
///   }
/// }
/// ```
public protocol RequestSigner: Sendable {
  /// `request`, signed as of `date`.
  /// - Parameters:
  ///   - request: The request as it will be sent.
  ///   - date: The time to sign it at: the client's `now`.
  /// - Returns: The request with its signature (headers, or query items).
  /// - Throws: Why it cannot be signed: a body file that cannot be read, say.
  func sign(_ request: HTTPRequest, at date: Date) async throws -> HTTPRequest
}

/// The digests signers are built from: SHA-256 and HMAC-SHA256, the same on every platform.
public enum RequestSigning {
  /// SHA-256 (FIPS 180-4) of `data`: 32 bytes.
  /// - Parameter data: The bytes to hash.
  /// - Returns: The digest.
  public static func sha256(_ data: Data) -> Data {
    SHA256Digest.hash(data)
  }

  /// HMAC-SHA256 (RFC 2104) of `message` under `key`: 32 bytes.
  /// - Parameters:
  ///   - key: The secret key.
  ///   - message: The bytes to authenticate.
  /// - Returns: The message authentication code.
  public static func hmacSHA256(key: Data, _ message: Data) -> Data {
    SHA256Digest.hmac(key: key, message)
  }

  /// The SHA-256 of a request's body in lower-case hex: of ``HTTPRequest/body``, or of the file
  /// at ``HTTPRequest/bodyFile`` read a piece at a time (never whole into memory), or of no bytes.
  /// - Parameter request: The request.
  /// - Returns: 64 hex digits.
  /// - Throws: `CocoaError` when the body file cannot be read, or is not a regular file (a named
  ///   pipe would never end); `CancellationError` when the calling task is cancelled meanwhile.
  public static func sha256Hex(of request: HTTPRequest) throws -> String {
    if let named = request.bodyFile {
      let file = named.resolvingSymlinksInPath()
      guard try file.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile == true else {
        throw CocoaError(.fileReadUnknown, userInfo: [NSURLErrorKey: named])
      }
      let handle = try FileHandle(forReadingFrom: file)
      defer { try? handle.close() }
      var hasher = SHA256Digest.Hasher()
      while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
        // A cancelled call stops here, not after the whole file.
        if Task.isCancelled { throw CancellationError() }
        hasher.update(chunk)
      }
      return hex(hasher.finalize())
    }
    return hex(sha256(request.body ?? Data()))
  }

  /// `bytes` as lower-case hex digits.
  static func hex(_ bytes: Data) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var text = [UInt8]()
    text.reserveCapacity(bytes.count * 2)
    for byte in bytes {
      text.append(digits[Int(byte >> 4)])
      text.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: text, as: UTF8.self)
  }
}
