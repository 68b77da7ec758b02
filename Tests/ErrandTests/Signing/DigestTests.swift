import Errand
import Foundation
import TestSupport
import Testing

/// SHA-256 and HMAC-SHA256 against their standards' examples: FIPS 180-4's (via NIST's
/// published examples) and RFC 4231's test cases 1 to 7, and a digest fed in pieces equal to one
/// fed whole.
@Suite(.timeLimit(.minutes(3))) struct DigestTests {
  static func bytes(_ hex: String) -> Data {
    var data = Data()
    var index = hex.startIndex
    while index < hex.endIndex {
      let next = hex.index(index, offsetBy: 2)
      data.append(UInt8(hex[index..<next], radix: 16) ?? 0)
      index = next
    }
    return data
  }

  static func hex(_ data: Data) -> String {
    data.map { String(format: "%02x", $0) }.joined()
  }

  /// RFC 4231 §4.2–4.8: key, data, HMAC-SHA256 (case 5 compares its first 128 bits).
  static let rfc4231: [(key: Data, data: Data, mac: String)] = [
    (
      Data(repeating: 0x0b, count: 20), Data("Hi There".utf8),
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    ),
    (
      Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ),
    (
      Data(repeating: 0xaa, count: 20), Data(repeating: 0xdd, count: 50),
      "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
    ),
    (
      Data(1...25), Data(repeating: 0xcd, count: 50),
      "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
    ),
    (
      Data(repeating: 0x0c, count: 20), Data("Test With Truncation".utf8),
      "a3b6167473100ee06e0c796c2955552b"
    ),
    (
      Data(repeating: 0xaa, count: 131),
      Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    ),
    (
      Data(repeating: 0xaa, count: 131),
      Data(
        ("This is a test using a larger than block-size key and a larger than block-size data. "
          + "The key needs to be hashed before being used by the HMAC algorithm.").utf8),
      "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
    ),
  ]

  @Test(arguments: 0..<7)
  func hmacMatchesRFC4231(_ index: Int) {
    let (key, data, mac) = Self.rfc4231[index]
    #expect(Self.hex(RequestSigning.hmacSHA256(key: key, data)).hasPrefix(mac))
  }

  /// NIST's SHA-256 examples: one block, two blocks, the empty message and a million `a`s.
  @Test(arguments: [
    ("abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    ("", 1, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("a", 1_000_000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
  ])
  func sha256MatchesNIST(_ text: String, repeated: Int, digest: String) {
    let message = Data(String(repeating: text, count: repeated).utf8)
    #expect(Self.hex(RequestSigning.sha256(message)) == digest)
  }

  /// A body file is hashed a piece at a time to the same digest as its bytes whole, across the
  /// 64-byte block and the 1 MiB read boundaries.
  @Test(.ownThread, arguments: [0, 1, 55, 56, 63, 64, 65, 1 << 20, (1 << 20) + 17])
  func aFileHashesAsItsBytes(size: Int) throws {
    let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    let file = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-digest-\(UUID().uuidString)")
    try bytes.write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    var request = HTTPRequest(method: .put, url: try #require(URL(string: "https://a.test/")))
    request.bodyFile = file
    #expect(try RequestSigning.sha256Hex(of: request) == Self.hex(RequestSigning.sha256(bytes)))
  }
}
