import Foundation

/// Reading certificates as a TLS engine that gives only their bytes needs: the DER blocks of a
/// PEM bundle, and a certificate's SubjectPublicKeyInfo with its pin. Used where the platform
/// compares pins itself (URLSession on Apple platforms); libcurl compares them on its own.
package enum CertificateKey {
  /// The DER bytes of every `CERTIFICATE` block in a PEM bundle, in order; blocks of other
  /// kinds (a private key) and text between blocks are skipped, and a block that is not base64
  /// is left out.
  package static func certificates(inPEM data: Data) -> [Data] {
    // Line by line, in one pass: a bundle of many blocks costs what its bytes cost.
    var blocks: [Data] = []
    var body: [UInt8]?
    for line in data.split(separator: 0x0A, omittingEmptySubsequences: true) {
      let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespaces)
      if text == "-----BEGIN CERTIFICATE-----" {
        body = []
      } else if text == "-----END CERTIFICATE-----" {
        if let collected = body, let der = Data(base64Encoded: Data(collected)), !der.isEmpty {
          blocks.append(der)
        }
        body = nil
      } else if body != nil {
        body?.append(contentsOf: line.filter { $0 > 0x20 })
      }
    }
    return blocks
  }

  /// The pin of a certificate (DER): the SHA-256 digest of its SubjectPublicKeyInfo, in base64;
  /// `nil` when the bytes are not a certificate.
  package static func pin(ofCertificate der: Data) -> String? {
    subjectPublicKeyInfo(ofCertificate: der).map { SHA256Digest.hash($0).base64EncodedString() }
  }

  /// The whole SubjectPublicKeyInfo element (tag and length included) of a certificate (DER,
  /// RFC 5280 §4.1): the seventh field of `tbsCertificate`, the sixth when it has no version;
  /// `nil` when the bytes are not a certificate.
  package static func subjectPublicKeyInfo(ofCertificate der: Data) -> Data? {
    let bytes = [UInt8](der)
    guard let certificate = element(in: bytes, at: 0), certificate.tag == 0x30,
      let tbs = element(in: bytes, at: certificate.contentStart), tbs.tag == 0x30,
      tbs.end <= certificate.end
    else { return nil }
    var offset = tbs.contentStart
    var fields: [Element] = []
    while offset < tbs.end, fields.count < 7 {
      guard let field = element(in: bytes, at: offset), field.end <= tbs.end else { return nil }
      fields.append(field)
      offset = field.end
    }
    // [0] version, serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo.
    let index = fields.first?.tag == 0xA0 ? 6 : 5
    guard fields.count > index, fields[index].tag == 0x30 else { return nil }
    return Data(bytes[fields[index].start..<fields[index].end])
  }

  /// One DER element: where it starts, its tag, where its content starts and where it ends.
  struct Element {
    var start: Int
    var tag: UInt8
    var contentStart: Int
    var end: Int
  }

  /// The element at `offset`, its lengths checked against the bytes; `nil` past the end, for
  /// an indefinite or over-long length (DER allows neither), or a length past the bytes.
  static func element(in bytes: [UInt8], at offset: Int) -> Element? {
    guard offset >= 0, offset + 2 <= bytes.count else { return nil }
    let tag = bytes[offset]
    let first = Int(bytes[offset + 1])
    var length = first
    var header = 2
    if first & 0x80 != 0 {
      let count = first & 0x7F
      guard (1...4).contains(count), offset + 2 + count <= bytes.count else { return nil }
      length = 0
      for byte in bytes[(offset + 2)..<(offset + 2 + count)] {
        length = length << 8 | Int(byte)
      }
      header += count
    }
    let end = offset + header + length
    guard end <= bytes.count else { return nil }
    return Element(start: offset, tag: tag, contentStart: offset + header, end: end)
  }
}
