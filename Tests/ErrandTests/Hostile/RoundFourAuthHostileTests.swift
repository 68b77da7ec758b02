import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Round four against the OAuth 2 provider and its file storage: a grant in flight while the user
/// signs out or another signs in, a cancelled caller, RFC 6749's encodings, and token files that
/// other users can write, own or replace.
@Suite(.timeLimit(.minutes(3))) struct RoundFourAuthHostileTests {
  typealias Fixture = OAuth2Fixture

  /// A door the token endpoint waits at until the test opens it.
  final class Gate: Sendable {
    private let state = Locked<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>(
      (false, []))
    let entered: AsyncStream<Int>
    private let enter: AsyncStream<Int>.Continuation

    init() {
      (entered, enter) = AsyncStream<Int>.makeStream()
    }

    /// Say grant `n` arrived, then wait until the gate opens.
    func pass(_ n: Int) async {
      enter.yield(n)
      await withCheckedContinuation { continuation in
        let now = state.withLock { state -> Bool in
          if state.open { return true }
          state.waiters.append(continuation)
          return false
        }
        if now { continuation.resume() }
      }
    }

    func open() {
      let waiters = state.withLock { state in
        state.open = true
        defer { state.waiters = [] }
        return state.waiters
      }
      for waiter in waiters { waiter.resume() }
    }

    /// Wait until a grant reaches the gate.
    func arrival() async {
      var arrivals = entered.makeAsyncIterator()
      _ = await arrivals.next()
    }
  }

  static let userB = StoredTokens(
    accessToken: "access-B", expiresAt: Fixture.start.addingTimeInterval(3600),
    refreshToken: "refresh-B")

  /// The user signs out while a refresh is at the token endpoint: when its answer comes, it is not
  /// kept (in memory or in the storage), and the caller is told to sign in, not handed the old
  /// user's token.
  @Test func signingOutDuringAGrantStaysSignedOut() async throws {
    let gate = Gate()
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, n in
      await gate.pass(n)
      return Fixture.granted(n)
    }
    let provider = try fixture.provider()
    let refresh = Task { try await provider.refreshAccessToken() }
    await gate.arrival()
    try await provider.signOut()
    gate.open()
    let result = await refresh.result
    #expect(try await fixture.storage.load() == nil)
    #expect(try await provider.currentAccessToken() == nil)
    #expect(throws: OAuth2TokenEndpointError.self) { try result.get() }
    if case .failure(let error) = result {
      #expect((error as? OAuth2TokenEndpointError)?.reason == .noRefreshToken)
      #expect(OAuth2TokenProvider.requiresSignIn(error))
    }
  }

  /// Another user signs in while the first user's refresh is at the token endpoint: its answer
  /// does not overwrite the new user's tokens, and the caller gets the new user's token.
  @Test func signingInDuringAGrantKeepsTheNewUser() async throws {
    let gate = Gate()
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, n in
      await gate.pass(n)
      return Fixture.granted(n)
    }
    let provider = try fixture.provider()
    let refresh = Task { try await provider.refreshAccessToken() }
    await gate.arrival()
    try await provider.signIn(Self.userB)
    gate.open()
    let result = await refresh.result
    #expect(try await fixture.storage.load() == Self.userB)
    #expect(try await provider.currentAccessToken()?.value == "access-B")
    #expect(try result.get().value == "access-B")
    #expect(fixture.grants.withLock { $0 } == 1)
  }

  /// The old user's refresh token is refused (`invalid_grant`) after a new user signed in: the new
  /// user's tokens stay, in memory and in the storage.
  @Test func anInvalidGrantForTheOldUserKeepsTheNewUser() async throws {
    let gate = Gate()
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, n in
      await gate.pass(n)
      return Fixture.json(#"{"error":"invalid_grant"}"#, status: 400)
    }
    let provider = try fixture.provider()
    let refresh = Task { try await provider.refreshAccessToken() }
    await gate.arrival()
    try await provider.signIn(Self.userB)
    gate.open()
    let result = await refresh.result
    #expect(try await fixture.storage.load() == Self.userB)
    #expect(try await provider.currentAccessToken()?.value == "access-B")
    #expect(try result.get().value == "access-B")
  }

  /// A caller of `refreshAccessToken()` that is cancelled stops waiting at once (the token
  /// endpoint may take its whole timeout), while another caller sharing the grant still gets it.
  @Test func aCancelledCallerStopsWaitingForTheGrant() async throws {
    let gate = Gate()
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, n in
      await gate.pass(n)
      return Fixture.granted(n)
    }
    let provider = try fixture.provider()
    let cancelled = Task { try await provider.refreshAccessToken() }
    await gate.arrival()
    let other = Task { try await provider.refreshAccessToken() }
    while await provider.joinedRequestCount < 1 { await Task.yield() }
    cancelled.cancel()
    let cancelledResult = await cancelled.result
    gate.open()
    #expect(throws: CancellationError.self) { try cancelledResult.get() }
    #expect(try await other.value.value == "access-1")
    #expect(try await fixture.storage.load()?.refreshToken == "refresh-1")
  }

  /// RFC 6749 §2.3.1: the client ID and secret are form-encoded before they are joined for Basic;
  /// reserved characters and non-ASCII included.
  @Test func basicCredentialsAreFormEncodedFirst() async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1))
    let provider = try fixture.provider(
      client: .basic(clientID: "app:1 é", secret: "a+b&c=d %/é:"))
    _ = try await provider.refreshAccessToken()
    let request = try #require(await fixture.tokenEndpoint.requests.first)
    let expected = Data("app%3A1+%C3%A9:a%2Bb%26c%3Dd+%25%2F%C3%A9%3A".utf8).base64EncodedString()
    #expect(request.headers["Authorization"] == "Basic \(expected)")
  }

  /// The form body carries reserved characters and non-ASCII of a refresh token, a scope and a
  /// client secret as values, never as new fields (RFC 6749 Appendix B).
  @Test func theFormBodyEncodesReservedCharacters() async throws {
    let fixture = Fixture(
      stored: StoredTokens(refreshToken: "r+1&grant_type=password=é"))
    let provider = try fixture.provider(
      grant: .refreshToken(scope: "dogs:read a+b"),
      client: .post(clientID: "id&x=1", secret: "s+e c=r&t"))
    _ = try await provider.refreshAccessToken()
    let request = try #require(await fixture.tokenEndpoint.requests.first)
    let body = String(decoding: request.body ?? Data(), as: UTF8.self)
    #expect(
      body
        == "grant_type=refresh_token&refresh_token=r%2B1%26grant_type%3Dpassword%3D%C3%A9"
        + "&scope=dogs%3Aread+a%2Bb&client_id=id%26x%3D1&client_secret=s%2Be+c%3Dr%26t")
  }

  /// RFC 6749 §5.1: `token_type` is case-insensitive.
  @Test(arguments: ["bearer", "BEARER", "bEaReR"])
  func theTokenTypeIsCaseInsensitive(type: String) async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, _ in
      Fixture.json(#"{"access_token":"access-1","token_type":"\#(type)","expires_in":60}"#)
    }
    let provider = try fixture.provider()
    #expect(try await provider.refreshAccessToken().value == "access-1")
  }

  /// A token endpoint that hands over tokens already expired (`expires_in` 0 or negative) under
  /// 100 calls: no expired token reaches the API and the endpoint is asked at most the
  /// middleware's refresh limit (5) times.
  @Test(arguments: ["0", "-5", "\"0\""])
  func anAlreadyExpiredGrantCannotStorm(expiresIn: String) async throws {
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { _, n in
      Fixture.json(
        #"{"access_token":"access-\#(n)","token_type":"Bearer","expires_in":\#(expiresIn)}"#)
    }
    let provider = try fixture.provider()
    let client = fixture.client(provider)
    for _ in 0..<2 {
      await withTaskGroup(of: Void.self) { group in
        for _ in 0..<100 {
          group.addTask { _ = await Fixture.failure(of: client) }
        }
      }
    }
    #expect(fixture.grants.withLock { $0 } <= 5)
    #expect(await fixture.api.requests.isEmpty)
  }

  /// Two providers on one storage (two clients in one app, an app and its extension): after one
  /// rotates the refresh token, the other spends the one it loaded before, which the server no
  /// longer takes: `invalid_grant`, and the storage (the first one's fresh tokens) is removed,
  /// signing the user out. Fixed: before spending its refresh token, a provider takes the
  /// storage's when someone else wrote a newer one.
  @Test func twoProvidersOnOneStorageDoNotSignTheUserOut() async throws {
    let valid = Locked("refresh-0")
    let fixture = Fixture(stored: Fixture.fresh(lifetime: -1)) { request, n in
      let spent = Fixture.form(request)["refresh_token"]
      let accepted = valid.withLock { valid -> Bool in
        guard spent == valid else { return false }
        valid = "refresh-\(n)"
        return true
      }
      return accepted
        ? Fixture.granted(n) : Fixture.json(#"{"error":"invalid_grant"}"#, status: 400)
    }
    let first = try fixture.provider()
    let second = try fixture.provider()
    _ = try await second.currentAccessToken()
    #expect(try await first.refreshAccessToken().value == "access-1")
    // The second spends the refresh token the first stored, not the one it loaded.
    #expect(try await second.refreshAccessToken().value == "access-2")
    #expect(try await fixture.storage.load()?.refreshToken == "refresh-2")
  }

  // MARK: - FileTokenStorage

  /// A folder of its own, `0755` whatever the umask, removed when `body` ends.
  static func inFolder(_ body: (URL) async throws -> Void) async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("errand-r4-tokens-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    chmod(folder.path, 0o755)
    defer { try? FileManager.default.removeItem(at: folder) }
    try await body(folder)
  }

  /// `tokens` written at `url` as JSON, with `mode`.
  static func plant(_ tokens: StoredTokens, at url: URL, mode: mode_t = 0o600) throws {
    try JSONEncoder().encode(tokens).write(to: url)
    chmod(url.path, mode)
  }

  static let planted = StoredTokens(accessToken: "attacker-access", refreshToken: "attacker-rt")

  /// A token file other users may write is not trusted: whoever wrote it could have planted their
  /// own tokens (and the app would act on their account). The cookie jar's file refuses the same.
  @Test(arguments: [0o666, 0o620, 0o602] as [mode_t])
  func aTokenFileOthersMayWriteIsNotLoaded(mode: mode_t) async throws {
    try await Self.inFolder { folder in
      let url = folder.appendingPathComponent("tokens.json")
      try Self.plant(Self.planted, at: url, mode: mode)
      let error = await #expect(throws: TokenStorageError.self) {
        try await FileTokenStorage(url: url).load()
      }
      #expect(error?.reason == "\(url.path) may be written by other users")
    }
  }

  /// A token file another user owns is not loaded (only when the tests run as root can one be
  /// made).
  @Test func aTokenFileAnotherUserOwnsIsNotLoaded() async throws {
    guard geteuid() == 0 else { return }
    try await Self.inFolder { folder in
      let url = folder.appendingPathComponent("tokens.json")
      try Self.plant(Self.planted, at: url)
      #expect(chown(url.path, 65534, 65534) == 0)
      let error = await #expect(throws: TokenStorageError.self) {
        try await FileTokenStorage(url: url).load()
      }
      #expect(error?.reason == "\(url.path) is owned by another user")
    }
  }

  /// A folder every user may write (and not sticky): another user could replace the file between
  /// saves; neither load nor save uses it, and nothing is written there.
  @Test func aFolderEveryoneMayWriteIsRefused() async throws {
    try await Self.inFolder { root in
      let folder = root.appendingPathComponent("shared")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
      chmod(folder.path, 0o777)
      let url = folder.appendingPathComponent("tokens.json")
      let storage = FileTokenStorage(url: url)
      let saveError = await #expect(throws: TokenStorageError.self) {
        try await storage.save(StoredTokens(refreshToken: "mine"))
      }
      #expect(saveError?.reason == "\(folder.path) may be written by every user")
      #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
      try Self.plant(Self.planted, at: url)
      let loadError = await #expect(throws: TokenStorageError.self) { try await storage.load() }
      #expect(loadError?.reason == "\(folder.path) may be written by every user")
    }
  }

  /// A sticky folder every user may write (`/tmp`'s mode) is allowed, as for the cookie jar.
  @Test func aStickyFolderIsAllowed() async throws {
    try await Self.inFolder { root in
      let folder = root.appendingPathComponent("sticky")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
      chmod(folder.path, 0o1777)
      let storage = FileTokenStorage(url: folder.appendingPathComponent("tokens.json"))
      try await storage.save(StoredTokens(refreshToken: "mine"))
      #expect(try await storage.load() == StoredTokens(refreshToken: "mine"))
    }
  }

  /// A FIFO, a symbolic link and a folder at the name: load refuses without hanging or following;
  /// save replaces a FIFO or a link (never writing through it) and leaves a folder alone.
  @Test func whatIsNotARegularFileIsNeitherReadNorWrittenThrough() async throws {
    try await Self.inFolder { folder in
      let url = folder.appendingPathComponent("tokens.json")
      let storage = FileTokenStorage(url: url)
      #expect(mkfifo(url.path, 0o600) == 0)
      await #expect(throws: TokenStorageError.self) { try await storage.load() }
      try await storage.save(StoredTokens(refreshToken: "mine"))
      #expect(try await storage.load() == StoredTokens(refreshToken: "mine"))
      try FileManager.default.removeItem(at: url)
      let target = folder.appendingPathComponent("elsewhere.json")
      try Self.plant(Self.planted, at: target)
      try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
      await #expect(throws: TokenStorageError.self) { try await storage.load() }
      try await storage.save(StoredTokens(refreshToken: "mine"))
      #expect(try await FileTokenStorage(url: target).load() == Self.planted)
      #expect(try await storage.load() == StoredTokens(refreshToken: "mine"))
      try FileManager.default.removeItem(at: url)
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
      await #expect(throws: TokenStorageError.self) {
        try await storage.save(StoredTokens(refreshToken: "mine"))
      }
      #expect(FileKind(atPath: url.path, following: false) == .directory)
    }
  }

  /// Tokens whose expiry JSON cannot hold (not a number) fail to save with `TokenStorageError`,
  /// as documented, not with the encoder's error.
  @Test(arguments: [Double.nan, .infinity])
  func anUnencodableExpiryFailsAsAStorageError(seconds: Double) async throws {
    try await Self.inFolder { folder in
      let storage = FileTokenStorage(url: folder.appendingPathComponent("tokens.json"))
      let tokens = StoredTokens(
        accessToken: "access-0", expiresAt: Date(timeIntervalSince1970: seconds),
        refreshToken: "refresh-0")
      let error = await #expect(throws: TokenStorageError.self) { try await storage.save(tokens) }
      #expect(error.map { "\($0)".contains("refresh-0") } == false)
    }
  }
}
