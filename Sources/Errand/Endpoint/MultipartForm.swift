import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, separated by a boundary.
///
/// ```swift
/// let form = MultipartForm(parts: [
///   .field("name", "Rex"),
///   .file("photo", filename: "rex.png", contentType: "image/png", data: png),
/// ])
/// let upload = Endpoint<Void>(method: .post, path: "dogs/photos", body: .multipart(form))
/// ```
public struct MultipartForm: Sendable, Hashable {
  /// One part of the form: a field or a file.
  public struct Part: Sendable, Hashable {
    /// The form field name.
    public var name: String
    /// The file name, for a file part.
    public var filename: String?
    /// The part's content type, or `nil` for a plain text field.
    public var contentType: String?
    /// The part's bytes.
    public var data: Data

    /// Create a part.
    /// - Parameters:
    ///   - name: The form field name.
    ///   - filename: The file name, for a file part.
    ///   - contentType: The part's content type, or `nil` for a plain text field.
    ///   - data: The part's bytes.
    public init(name: String, filename: String? = nil, contentType: String? = nil, data: Data) {
      self.name = name
      self.filename = filename
      self.contentType = contentType
      self.data = data
    }

    /// A text field.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value, sent as UTF-8.
    /// - Returns: The part.
    public static func field(_ name: String, _ value: String) -> Part {
      Part(name: name, data: Data(value.utf8))
    }

    /// A file.
    /// - Parameters:
    ///   - name: The field name.
    ///   - filename: The file name the server sees.
    ///   - contentType: The file's content type.
    ///   - data: The file's bytes.
    /// - Returns: The part.
    public static func file(
      _ name: String, filename: String, contentType: String = "application/octet-stream",
      data: Data
    ) -> Part {
      Part(name: name, filename: filename, contentType: contentType, data: data)
    }
  }

  /// The boundary between parts: 1 to 70 characters from RFC 2046's set, not appearing in any part.
  public var boundary: String
  /// The parts, in order.
  public var parts: [Part]

  /// Create a form.
  /// - Parameters:
  ///   - boundary: The boundary; a random one by default.
  ///   - parts: The parts, in order.
  public init(boundary: String = MultipartForm.randomBoundary(), parts: [Part]) {
    self.boundary = boundary
    self.parts = parts
  }

  /// A fresh random boundary such as `errand-3F2504E04F8911D39A0C0305E82C3301`.
  /// - Returns: The boundary.
  public static func randomBoundary() -> String {
    "errand-" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
  }

  /// The `Content-Type` header value, `multipart/form-data; boundary=...`.
  public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

  /// The encoded body: each part as `--boundary CRLF headers CRLF CRLF data CRLF`, then
  /// `--boundary-- CRLF`.
  /// - Returns: The bytes.
  /// - Throws: ``APIError/invalidRequest(_:)`` when the boundary is not valid or appears inside a
  ///   part, or a content type contains a control character.
  public func encoded() throws -> Data {
    try validateBoundary()
    let delimiter = Data("--\(boundary)".utf8)
    var body = Data()
    for part in parts {
      if part.data.range(of: delimiter) != nil {
        throw APIError.invalidRequest(
          "the multipart boundary \"\(boundary)\" appears inside the part \"\(part.name)\".")
      }
      var head =
        "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.quote(part.name))\""
      if let filename = part.filename {
        head += "; filename=\"\(Self.quote(filename))\""
      }
      head += "\r\n"
      if let contentType = part.contentType {
        if contentType.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
          throw APIError.invalidRequest(
            "the content type of multipart part \"\(part.name)\" contains a control character.")
        }
        head += "Content-Type: \(contentType)\r\n"
      }
      body.append(Data((head + "\r\n").utf8))
      body.append(part.data)
      body.append(Data("\r\n".utf8))
    }
    body.append(Data("--\(boundary)--\r\n".utf8))
    return body
  }

  private func validateBoundary() throws {
    let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'()+_,-./:=?")
    guard (1...70).contains(boundary.count), boundary.allSatisfy(allowed.contains) else {
      throw APIError.invalidRequest(
        "the multipart boundary \"\(boundary)\" must be 1 to 70 letters, digits or '()+_,-./:=?.")
    }
  }

  /// Escape a name for a quoted Content-Disposition parameter, as the HTML standard does:
  /// `"` as `%22`, CR as `%0D` and LF as `%0A`.
  private static func quote(_ text: String) -> String {
    text.replacingOccurrences(of: "\"", with: "%22")
      .replacingOccurrences(of: "\r", with: "%0D")
      .replacingOccurrences(of: "\n", with: "%0A")
  }
}
