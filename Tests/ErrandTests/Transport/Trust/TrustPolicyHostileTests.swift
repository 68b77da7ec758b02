import Errand
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Hostile probes of `TrustPolicy` as a value and of what reads its files: each asserts the
/// documented (safe) behaviour, so it fails when the defect exists.
@Suite(.timeLimit(.minutes(3))) struct TrustPolicyHostileTests {
  static let pinA = Data(repeating: 0xA1, count: 32).base64EncodedString()
  static let passphrase = "Hostile-Probe-Passphrase-7f3c"
  static let keyBody = "TUlJRXZRSUJBREFOQmdrcWhraUc5dzBCQVFFRkFBU0NCS2N3Z2dTakFnRUFBb0lC"
  static let key = Data(
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\n\(keyBody)\n-----END ENCRYPTED PRIVATE KEY-----\n"
      .utf8)
  static let certificateBody = "Q0VSVElGSUNBVEUtQllURVMtVEhBVC1NVVNULU5PVC1CRS1QUklOVEVE"
  static let certificate = Data(
    "-----BEGIN CERTIFICATE-----\n\(certificateBody)\n-----END CERTIFICATE-----\n".utf8)

  // MARK: Host forms libcurl normalizes

  /// libcurl 7.88 connects to 127.0.0.1 for each of these spellings (and verifies the
  /// certificate against 127.0.0.1), so a pin on 127.0.0.1 must apply to them.
  @Test(arguments: ["127.1", "2130706433", "0x7f.0.0.1", "0177.0.0.1", "127.0.1", "0x7f000001"])
  func anIPv4SpellingLibcurlNormalizesGetsTheAddressesPins(_ spelling: String) {
    let policy = TrustPolicy(pins: [.init(hosts: ["127.0.0.1"], sha256: [Self.pinA])])
    #expect(
      policy.pins(for: spelling) != nil, "\(spelling) is not pinned; libcurl reaches 127.0.0.1")
  }

  /// libcurl 7.88 shortens IPv6 literals (`[0:0:0:0:0:0:0:1]` becomes `[::1]`).
  @Test(arguments: ["0:0:0:0:0:0:0:1", "[0:0:0:0:0:0:0:1]", "0::1", "::0:1"])
  func anIPv6SpellingLibcurlNormalizesGetsTheAddressesPins(_ spelling: String) {
    let policy = TrustPolicy(pins: [.init(hosts: ["::1"], sha256: [Self.pinA])])
    #expect(policy.pins(for: spelling) != nil, "\(spelling) is not pinned; libcurl reaches ::1")
  }

  /// Client-certificate patterns never name a look-alike host.
  @Test(arguments: [
    ("*.a.test", "a.test.evil"), ("*.a.test", "x.a.test.evil"), ("**.a.test", "a.test.evil"),
    ("**.a.test", "xa.test"), ("**.a.test", "x.xa.test"), ("a.test", "a.test.evil"),
    ("a.test", "xa.test"), ("*.a.test", "a.test"), ("*.a.test", "x.y.a.test"),
    ("127.0.0.1", "127.0.0.1.evil"), ("a.test", "a.test.."), ("*.a.test", "*.a.test.evil"),
    ("a.test", "a.test%2eevil"), ("a.test", "a.test\u{0}.evil"),
  ])
  func aClientCertificatePatternNamesNoLookAlike(_ pattern: String, _ host: String) {
    let policy = TrustPolicy(
      clientCertificate: .pem(
        certificate: .data(Self.certificate), key: .data(Self.key), for: [pattern]))
    #expect(!policy.presentsClientCertificate(to: host), "\(pattern) names \(host)")
  }

  // MARK: Pins libcurl might read differently

  /// A pin is refused by name, or handed to libcurl in the one canonical form that decodes to
  /// the same 32 bytes.
  @Test(arguments: [
    " \(TrustPolicyHostileTests.pinA) ", "\(TrustPolicyHostileTests.pinA)\n",
    "sha256//\(TrustPolicyHostileTests.pinA)", "SHA256//\(TrustPolicyHostileTests.pinA)",
    "sha256/\(TrustPolicyHostileTests.pinA)",
    "sha256//sha256//\(TrustPolicyHostileTests.pinA)",
    TrustPolicyHostileTests.pinA.replacingOccurrences(of: "+", with: "-"),
    String(TrustPolicyHostileTests.pinA.dropLast()),
    "\(TrustPolicyHostileTests.pinA);sha256//\(TrustPolicyHostileTests.pinA)",
    "\u{00A0}\(TrustPolicyHostileTests.pinA)",
    String(TrustPolicyHostileTests.pinA.prefix(20)) + " "
      + String(TrustPolicyHostileTests.pinA.dropFirst(20)),
  ])
  func aPinIsRefusedOrCanonical(_ digest: String) throws {
    let policy = TrustPolicy(pins: [.init(hosts: ["a.test"], sha256: [digest])])
    do {
      try policy.validate()
      let pins = try #require(policy.pins(for: "a.test"))
      #expect(pins.sha256 == [Self.pinA], "\(String(reflecting: digest)) → \(pins.sha256)")
    } catch let error as InvalidConnectionOption {
      #expect(error.option == "trust.pins[0].sha256")
    }
  }

  // MARK: Printed forms

  static let clientCertificates: [TrustPolicy.ClientCertificate] = [
    .pem(
      certificate: .data(certificate), key: .data(key), passphrase: passphrase, for: ["a.test"]),
    .pkcs12(.data(Data([0x30]) + key), passphrase: passphrase, for: ["*"]),
    .pem(
      certificate: .file(URL(fileURLWithPath: "/tmp/c.pem")),
      key: .file(URL(fileURLWithPath: "/tmp/k.pem")), passphrase: passphrase, for: ["a.test"]),
  ]

  static func printedForms(_ value: Any) -> [String] {
    var dumped = ""
    dump(value, to: &dumped)
    var forms = [String(describing: value), String(reflecting: value), dumped]
    func walk(_ mirror: Mirror, depth: Int) {
      guard depth < 6 else { return }
      for child in mirror.children {
        forms.append(String(reflecting: child.value))
        walk(Mirror(reflecting: child.value), depth: depth + 1)
      }
    }
    walk(Mirror(reflecting: value), depth: 0)
    return forms
  }

  @Test(arguments: 0..<clientCertificates.count)
  func noPrintedFormOfAPolicyShowsASecret(_ index: Int) throws {
    let certificate = Self.clientCertificates[index]
    let policy = TrustPolicy(
      pins: [.init(hosts: ["a.test"], sha256: [Self.pinA])],
      certificateAuthorities: .adding([.data(Self.certificate)]),
      clientCertificate: certificate)
    let values: [Any] = [
      policy, certificate, policy.certificateAuthorities as Any,
      try #require(policy.certificateAuthorities).certificates, policy.pins,
    ]
    for value in values {
      for text in Self.printedForms(value) {
        for secret in [Self.passphrase, Self.keyBody, Self.certificateBody]
        where text.contains(secret) {
          Issue.record("shows \(secret.prefix(10))…: \(text)")
        }
      }
    }
  }

  /// Every refusal while reading a policy names the option and quotes no secret: a passphrase
  /// with a NUL, a key where the certificate belongs, a certificate where the key belongs,
  /// PEM given as PKCS#12.
  @Test func refusalsQuoteNoSecret() {
    let policies: [TrustPolicy] = [
      TrustPolicy(
        clientCertificate: .pem(
          certificate: .data(Self.certificate), key: .data(Self.key),
          passphrase: Self.passphrase + "\0", for: ["a.test"])),
      TrustPolicy(
        clientCertificate: .pem(
          certificate: .data(Self.key), key: .data(Self.key), passphrase: Self.passphrase,
          for: ["a.test"])),
      TrustPolicy(
        clientCertificate: .pem(
          certificate: .data(Self.certificate), key: .data(Self.certificate),
          passphrase: Self.passphrase, for: ["a.test"])),
      TrustPolicy(
        clientCertificate: .pkcs12(.data(Self.key), passphrase: Self.passphrase, for: ["*"])),
      TrustPolicy(certificateAuthorities: .replacingSystemTrust(with: [.data(Self.key)])),
    ]
    for policy in policies {
      do {
        _ = try LoadedTrust(policy)
        Issue.record("accepted \(policy)")
      } catch {
        #expect(error is InvalidConnectionOption, "\(error)")
        var dumped = ""
        dump(error, to: &dumped)
        for text in [String(describing: error), String(reflecting: error), dumped]
          + [error.localizedDescription]
        {
          for secret in [Self.passphrase, Self.keyBody, Self.certificateBody]
          where text.contains(secret) {
            Issue.record("the refusal shows \(secret.prefix(10))…: \(text)")
          }
        }
      }
    }
  }

  // MARK: Files

  /// A folder of its own, removed when the test ends.
  static func folder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-trust-hostile-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
  }

  final class Outcome: @unchecked Sendable {
    let lock = NSLock()
    var done = false
    var error: (any Error)?
    var isDone: Bool { lock.withLock { done } }
  }

  /// Read `policy` on a thread of its own; if it has not finished within `patience` (long, so
  /// that a loaded machine is not taken for a blocked read: the read does not wait), unblock
  /// it by opening `fifo` for writing and closing it (a reader blocked there then sees the
  /// end). Returns whether it had to be unblocked, and what it threw.
  static func read(_ policy: TrustPolicy, unblocking fifo: String, patience: Duration)
    async throws -> (blocked: Bool, error: (any Error)?)
  {
    let outcome = Outcome()
    let thread = Thread {
      var thrown: (any Error)?
      do { _ = try LoadedTrust(policy) } catch { thrown = error }
      outcome.lock.withLock {
        outcome.done = true
        outcome.error = thrown
      }
    }
    thread.start()
    let deadline = ContinuousClock.now + patience
    while !outcome.isDone, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    let blocked = !outcome.isDone
    var tries = 0
    while !outcome.isDone, tries < 400 {
      let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
      if descriptor >= 0 { close(descriptor) }
      try await Task.sleep(for: .milliseconds(25))
      tries += 1
    }
    #expect(outcome.isDone, "could not unblock the read")
    return (blocked, outcome.lock.withLock { outcome.error })
  }

  /// `decoy/link/../ca.pem`, `link` a chain of `length` symbolic links to `real/deep`: the
  /// kernel (40 links per lookup) opens `real/ca.pem`, a named pipe; a resolver that gives up
  /// earlier and drops `..` by text checks `decoy/ca.pem` (a regular file, or missing).
  @Test(arguments: [(1, true), (25, true), (36, true), (36, false)])
  func aNamedPipeBehindDotDotAndASymlinkChainIsRefusedNotRead(
    _ length: Int, _ decoyExists: Bool
  ) async throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let manager = FileManager.default
    let real = folder.appendingPathComponent("real")
    try manager.createDirectory(
      at: real.appendingPathComponent("deep"), withIntermediateDirectories: true)
    let fifo = real.appendingPathComponent("ca.pem")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    let decoy = folder.appendingPathComponent("decoy")
    try manager.createDirectory(at: decoy, withIntermediateDirectories: true)
    if decoyExists {
      try Self.certificate.write(to: decoy.appendingPathComponent("ca.pem"))
    }
    var target = real.appendingPathComponent("deep").path
    for index in 0..<(length - 1) {
      let link = folder.appendingPathComponent("c\(index)")
      try manager.createSymbolicLink(atPath: link.path, withDestinationPath: target)
      target = link.path
    }
    try manager.createSymbolicLink(
      atPath: decoy.appendingPathComponent("link").path, withDestinationPath: target)
    let path = decoy.path + "/link/../ca.pem"
    let policy = TrustPolicy(
      certificateAuthorities: .adding([.file(URL(fileURLWithPath: path))]))
    let (blocked, error) = try await Self.read(
      policy, unblocking: fifo.path, patience: .seconds(30))
    #expect(!blocked, "creation blocked on a named pipe (\(length) links)")
    #expect(
      (error as? InvalidConnectionOption)?.reason.contains("not a regular file") == true,
      "\(String(describing: error))")
  }

  /// `/proc/self/fd/N` of a pipe whose writer stays open: refused, never read.
  @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd"), "needs /proc"))
  func aPipeThroughProcSelfFdIsRefusedNotRead() async throws {
    let pipe = Pipe()
    let path = "/proc/self/fd/\(pipe.fileHandleForReading.fileDescriptor)"
    let policy = TrustPolicy(certificateAuthorities: .adding([.file(URL(fileURLWithPath: path))]))
    let outcome = Outcome()
    Thread {
      var thrown: (any Error)?
      do { _ = try LoadedTrust(policy) } catch { thrown = error }
      outcome.lock.withLock {
        outcome.done = true
        outcome.error = thrown
      }
    }.start()
    let deadline = ContinuousClock.now + .seconds(30)
    while !outcome.isDone, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    let blocked = !outcome.isDone
    try pipe.fileHandleForWriting.close()
    while !outcome.isDone { try await Task.sleep(for: .milliseconds(50)) }
    #expect(!blocked, "creation blocked on a pipe")
    #expect(outcome.lock.withLock { outcome.error } is InvalidConnectionOption)
  }

  /// A sparse file of 1 TiB is refused for its size, after reading at most 4 MiB + 1 (not
  /// timed: a read of the whole file would outlast the suite's time limit).
  @Test func aHugeSparseFileIsRefusedQuickly() throws {
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let file = folder.appendingPathComponent("huge.pem")
    try Self.certificate.write(to: file)
    #expect(truncate(file.path, 1 << 40) == 0)
    let error = #expect(throws: InvalidConnectionOption.self) {
      _ = try LoadedTrust(TrustPolicy(certificateAuthorities: .adding([.file(file)])))
    }
    #expect(error?.reason.contains("larger than 4 MiB") == true)
  }

  // MARK: URLSessionTransport on Linux

  #if canImport(FoundationNetworking)
    static let unsupported: [TrustPolicy] = [
      TrustPolicy(pins: [.init(hosts: ["a.test"], sha256: [pinA], reportOnly: true)]),
      TrustPolicy(pins: [.init(hosts: [], sha256: [])]),
      TrustPolicy(certificateAuthorities: .adding([])),
      TrustPolicy(certificateAuthorities: .replacingSystemTrust(with: [.data(certificate)])),
      TrustPolicy(clientCertificate: .keychainIdentity(label: "x", for: ["a.test"])),
      TrustPolicy(
        clientCertificate: .pkcs12(.data(Data([0x30, 0])), passphrase: "p", for: ["nowhere"])),
    ]

    @Test(arguments: 0..<unsupported.count)
    func urlSessionTransportOnLinuxRefusesEveryPart(_ index: Int) {
      #expect(throws: UnsupportedTransportOption.self) {
        _ = try URLSessionTransport(trust: Self.unsupported[index])
      }
    }
  #endif

  // MARK: SHA-256 and the DER reader

  /// The digest of every length around the block boundaries, and some long ones, equals
  /// `sha256sum`'s.
  @Test(.ownThread) func sha256AgreesWithSha256sum() throws {
    let tool = "/usr/bin/sha256sum"
    guard FileManager.default.isExecutableFile(atPath: tool) else { return }
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    var generator = SystemRandomNumberGenerator()
    let lengths = Array(0...200) + [447, 448, 511, 512, 1000, 4095, 4096, 65_537, 1_000_003]
    var files: [String] = []
    var expected: [String] = []
    for length in lengths {
      let bytes = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) })
      let file = folder.appendingPathComponent("\(length)").path
      #expect(FileManager.default.createFile(atPath: file, contents: bytes))
      files.append(file)
      expected.append(SHA256Digest.hash(bytes).map { String(format: "%02x", $0) }.joined())
    }
    let output = try Self.run(tool, files)
    let digests = output.split(separator: "\n").map { String($0.prefix(64)) }
    #expect(digests == expected)
  }

  static let hasOpenSSL = FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")

  static func run(_ tool: String, _ arguments: [String], input: Data? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    if let input {
      let pipe = Pipe()
      process.standardInput = pipe
      try process.run()
      pipe.fileHandleForWriting.write(input)
      try pipe.fileHandleForWriting.close()
    } else {
      try process.run()
    }
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
  }

  /// Certificates of each key type made by `openssl`; the pin Errand computes is the one
  /// OpenSSL computes from the public key (what libcurl compares).
  @Test(
    .enabled(if: hasOpenSSL, "needs /usr/bin/openssl"),
    arguments: [
      ["-newkey", "rsa:2048"], ["-newkey", "rsa:1024"],
      [
        "-newkey", "ec", "-pkeyopt",
        "ec_paramgen_curve:P-256",
      ], ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-521"],
      ["-newkey", "ed25519"], ["-newkey", "ed448"],
    ])
  func thePinOfEachKeyTypeIsOpenSSLs(_ keyArguments: [String]) throws {
    let openssl = "/usr/bin/openssl"
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let certificate = folder.appendingPathComponent("c.pem").path
    _ = try Self.run(
      openssl,
      [
        "req", "-x509", "-nodes", "-subj", "/CN=probe", "-days", "1", "-keyout",
        folder.appendingPathComponent("k.pem").path, "-out", certificate,
      ] + keyArguments)
    let pem = try Data(contentsOf: URL(fileURLWithPath: certificate))
    let der = try #require(CertificateKey.certificates(inPEM: pem).first)
    let publicKey = try Self.run(openssl, ["x509", "-in", certificate, "-pubkey", "-noout"])
    let spkiFile = folder.appendingPathComponent("spki.pem").path
    #expect(FileManager.default.createFile(atPath: spkiFile, contents: Data(publicKey.utf8)))
    let spkiDER = try #require(
      Data(
        base64Encoded: publicKey.split(separator: "\n").filter { !$0.hasPrefix("-----") }
          .joined()))
    #expect(CertificateKey.subjectPublicKeyInfo(ofCertificate: der) == spkiDER)
    #expect(
      CertificateKey.pin(ofCertificate: der) == SHA256Digest.hash(spkiDER).base64EncodedString())
  }

  /// Truncations, every single-byte change, and random bytes: the DER reader answers `nil`
  /// or a slice of the input, never crashes, and a changed certificate's pin is computed from
  /// bytes that are in it.
  @Test(.ownThread, .enabled(if: hasOpenSSL, "needs /usr/bin/openssl"))
  func theDERReaderSurvivesFuzzing() throws {
    let openssl = "/usr/bin/openssl"
    let folder = try Self.folder()
    defer { try? FileManager.default.removeItem(at: folder) }
    let certificate = folder.appendingPathComponent("c.pem").path
    _ = try Self.run(
      openssl,
      [
        "req", "-x509", "-nodes", "-subj", "/CN=fuzz", "-days", "1", "-newkey", "ec",
        "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout",
        folder.appendingPathComponent("k.pem").path, "-out", certificate,
      ])
    let der = try #require(
      CertificateKey.certificates(inPEM: try Data(contentsOf: URL(fileURLWithPath: certificate)))
        .first)
    var bytes = [UInt8](der)
    for length in 0..<bytes.count {
      _ = CertificateKey.pin(ofCertificate: Data(bytes[..<length]))
    }
    let interesting: [UInt8] = [0x00, 0x01, 0x7F, 0x80, 0x81, 0x84, 0x85, 0x88, 0xFF, 0x30, 0xA0]
    for index in 0..<bytes.count {
      let original = bytes[index]
      for value in interesting {
        bytes[index] = value
        if let spki = CertificateKey.subjectPublicKeyInfo(ofCertificate: Data(bytes)) {
          #expect(spki.count <= bytes.count)
        }
      }
      bytes[index] = original
    }
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<20_000 {
      let count = Int.random(in: 0...64, using: &generator)
      var random = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if !random.isEmpty { random[0] = 0x30 }
      _ = CertificateKey.pin(ofCertificate: Data(random))
    }
    // Long-form lengths at their largest, nested.
    let hostile: [[UInt8]] = [
      [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF], [0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF, 0x30],
      [0x30, 0x06, 0x30, 0x84, 0x00, 0x00, 0x00, 0x00], [0x30, 0x80, 0x30, 0x80, 0, 0, 0, 0],
      [0x30, 0x02, 0x30, 0x00] + Array(repeating: 0x30, count: 1000),
    ]
    for input in hostile {
      #expect(CertificateKey.pin(ofCertificate: Data(input)) == nil)
    }
  }

  /// PEM bundles that are junk, a few MiB of `BEGIN` markers without end, or blocks nested
  /// inside each other: read in one pass, without a crash.
  @Test(.ownThread) func thePEMReaderIsLinearOnHostileBundles() {
    let begin = "-----BEGIN CERTIFICATE-----\n"
    let bundles: [String] = [
      String(repeating: begin, count: 150_000),
      String(repeating: begin + "QUJD\n", count: 100_000) + "-----END CERTIFICATE-----\n",
      String(repeating: begin + "QUJD\n-----END CERTIFICATE-----\n", count: 60_000),
      String(repeating: "-----END CERTIFICATE-----\n", count: 150_000),
    ]
    // Not timed here (a loaded machine makes any bound a guess): the suite's time limit
    // catches a reader that is not linear. A `BEGIN` that another follows is dropped: the
    // second bundle is one block; the third bundle's blocks are all read.
    let counts = bundles.map { CertificateKey.certificates(inPEM: Data($0.utf8)).count }
    #expect(counts == [0, 1, 60_000, 0])
  }
}
