import Foundation

/// SHA-256 (FIPS 180-4), small and portable, for pins where the platform offers no digest to
/// every platform Errand builds on. Checked against the NIST examples (`SHA256DigestTests`).
package enum SHA256Digest {
  fileprivate static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4,
    0xab1c_5ed5, 0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe,
    0x9bdc_06a7, 0xc19b_f174, 0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f,
    0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da, 0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7,
    0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967, 0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc,
    0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85, 0xa2bf_e8a1, 0xa81a_664b,
    0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070, 0x19a4_c116,
    0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7,
    0xc671_78f2,
  ]

  /// The 32-byte digest of `data`.
  package static func hash(_ data: Data) -> Data {
    var hasher = Hasher()
    hasher.update(data)
    return hasher.finalize()
  }

  /// HMAC-SHA256 (RFC 2104) of `message` under `key`: 32 bytes. Checked against RFC 4231's
  /// examples (`HMACTests`).
  package static func hmac(key: Data, _ message: Data) -> Data {
    var key = key.count > 64 ? hash(key) : key
    key.append(contentsOf: [UInt8](repeating: 0, count: 64 - key.count))
    var inner = Hasher()
    inner.update(Data(key.map { $0 ^ 0x36 }))
    inner.update(message)
    var outer = Hasher()
    outer.update(Data(key.map { $0 ^ 0x5c }))
    outer.update(inner.finalize())
    return outer.finalize()
  }

  /// A digest computed piece by piece, so that a file is hashed without being read whole.
  package struct Hasher: Sendable {
    private var state: [UInt32] = [
      0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab,
      0x5be0_cd19,
    ]
    /// Bytes not yet compressed: fewer than a 64-byte block.
    private var pending: [UInt8] = []
    /// How many bytes were given in all.
    private var length: UInt64 = 0

    package init() {}

    /// Add `data` to what is hashed.
    package mutating func update(_ data: Data) {
      length += UInt64(data.count)
      var bytes = data[...]
      if !pending.isEmpty {
        let taken = bytes.prefix(64 - pending.count)
        pending.append(contentsOf: taken)
        bytes = bytes.dropFirst(taken.count)
        guard pending.count == 64 else { return }
        compress(pending[...])
        pending.removeAll(keepingCapacity: true)
      }
      let whole = bytes.count / 64 * 64
      if whole > 0 {
        [UInt8](bytes.prefix(whole)).withUnsafeBufferPointer { buffer in
          for block in stride(from: 0, to: whole, by: 64) {
            compress(buffer[block..<block + 64])
          }
        }
      }
      pending.append(contentsOf: bytes.dropFirst(whole))
    }

    /// The 32-byte digest of everything given.
    package mutating func finalize() -> Data {
      let bits = length &* 8
      var tail = pending
      tail.append(0x80)
      while tail.count % 64 != 56 {
        tail.append(0)
      }
      for shift in stride(from: 56, through: 0, by: -8) {
        tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
      }
      for block in stride(from: 0, to: tail.count, by: 64) {
        compress(tail[block..<block + 64])
      }
      var digest = Data(capacity: 32)
      for word in state {
        for shift in stride(from: 24, through: 0, by: -8) {
          digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
        }
      }
      return digest
    }

    /// Compress one 64-byte block into the state.
    private mutating func compress<Block: Collection<UInt8>>(_ block: Block)
    where Block.Index == Int {
      var w = [UInt32](repeating: 0, count: 64)
      let start = block.startIndex
      for i in 0..<16 {
        let j = start + i * 4
        w[i] =
          UInt32(block[j]) << 24 | UInt32(block[j + 1]) << 16 | UInt32(block[j + 2]) << 8
          | UInt32(block[j + 3])
      }
      for i in 16..<64 {
        let s0 =
          SHA256Digest.rotate(w[i - 15], 7) ^ SHA256Digest.rotate(w[i - 15], 18) ^ (w[i - 15] >> 3)
        let s1 =
          SHA256Digest.rotate(w[i - 2], 17) ^ SHA256Digest.rotate(w[i - 2], 19) ^ (w[i - 2] >> 10)
        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
      }
      var (a, b, c, d, e, f, g, h) = (
        state[0], state[1], state[2], state[3], state[4], state[5], state[6], state[7]
      )
      for i in 0..<64 {
        let s1 = SHA256Digest.rotate(e, 6) ^ SHA256Digest.rotate(e, 11) ^ SHA256Digest.rotate(e, 25)
        let choice = (e & f) ^ (~e & g)
        let t1 = h &+ s1 &+ choice &+ SHA256Digest.k[i] &+ w[i]
        let s0 = SHA256Digest.rotate(a, 2) ^ SHA256Digest.rotate(a, 13) ^ SHA256Digest.rotate(a, 22)
        let majority = (a & b) ^ (a & c) ^ (b & c)
        let t2 = s0 &+ majority
        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
      }
      for (i, value) in [a, b, c, d, e, f, g, h].enumerated() {
        state[i] = state[i] &+ value
      }
    }
  }

  fileprivate static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
    (value >> count) | (value << (32 - count))
  }
}
