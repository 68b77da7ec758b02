import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

// An outside, hostile review of the HAR support: secrets that reach a file or a message, one
// caller's recorded data served to another, odd input, files, growth, and HAR 1.2 itself.
// Each probe asserts the behaviour the documentation promises; those that found a defect were
// kept inside `withKnownIssue("defect: …")` until it was fixed (see the git history).

/// An entry built in code, with the parts a probe changes.
private func reviewEntry(
  _ method: String = "GET", _ address: String, requestHeaders: [HAR.Header] = [],
  cookies: [HAR.Cookie] = [], queryString: [HAR.QueryParameter] = [],
  postData: HAR.PostData? = nil, status: Int = 200, responseHeaders: [HAR.Header] = [],
  mimeType: String = "text/plain", text: String? = nil, encoding: String? = nil,
  comment: String? = nil
) -> HAR.Entry {
  HAR.Entry(
    startedDateTime: Date(timeIntervalSince1970: 1_700_000_000),
    request: HAR.Request(
      method: method, url: address, cookies: cookies, headers: requestHeaders,
      queryString: queryString, postData: postData),
    response: HAR.Response(
      status: status, headers: responseHeaders,
      content: HAR.Content(
        size: text?.utf8.count ?? 0, mimeType: mimeType, text: text, encoding: encoding)),
    comment: comment)
}

/// The archive as `encoded(redaction:)` writes it, as text.
private func reviewWritten(_ har: HAR, _ redaction: Redaction = .default) throws -> String {
  utf8Text(try har.encoded(redaction: redaction))
}

/// A body as text.
private func reviewBody(_ response: HTTPResponse?) -> String? {
  response.map { utf8Text($0.body) }
}

@Suite(.timeLimit(.minutes(3))) struct HARReviewTests {
  // MARK: Secrets in what is written or printed

  /// Chrome lists HTTP/2 pseudo-headers on every request; `:path` holds the query. Proxies add
  /// `X-Original-URL`. The URL's token is hidden there too (was not).
  @Test(arguments: [":path", "X-Original-URL"])
  func aTokenInAHeaderThatRepeatsTheURLIsHidden(_ name: String) throws {
    let har = HAR(entries: [
      reviewEntry(
        "GET", "https://api.example.com/v1/me?access_token=at-5e4d3c2b1a",
        requestHeaders: [HAR.Header(name: name, value: "/v1/me?access_token=at-5e4d3c2b1a")])
    ])
    let text = try reviewWritten(har)
    #expect(text.contains("https://api.example.com/v1/me?access_token=%3Credacted%3E"))
    #expect(!text.contains("at-5e4d3c2b1a"), "written: \(text)")
    for form in printedForms(of: har.log.entries[0].request) {
      #expect(!form.contains("at-5e4d3c2b1a"), "printed: \(form)")
    }
  }

  /// A login response hands out a token (under a key the redaction does not name); the next
  /// entry sends it as `Authorization`: hidden there and in the login body (was kept there).
  @Test func aTokenCarriedByOneEntryIsHiddenInTheOthers() throws {
    let har = HAR(entries: [
      reviewEntry(
        "POST", "https://api.example.com/v1/login", mimeType: "application/json",
        text: #"{"accessToken":"at-77c1d2e3f4","user":"rex"}"#),
      reviewEntry(
        "GET", "https://api.example.com/v1/me",
        requestHeaders: [HAR.Header(name: "Authorization", value: "Bearer at-77c1d2e3f4")]),
    ])
    let text = try reviewWritten(har)
    #expect(text.contains(#""name": "Authorization","#))
    #expect(!text.contains("at-77c1d2e3f4"), "written: \(text)")
  }

  /// A stub's journal: the session a `Set-Cookie` sets is hidden in the header and where the
  /// same response's body repeats it (was not).
  @Test func aSessionSetByACookieIsHiddenWhereTheBodyRepeatsIt() async throws {
    let stub = StubTransport()
    await stub.on(
      .post, "/v1/login",
      .status(
        200, body: Data(#"{"session":"sid-0a9b8c7d6e","user":"rex"}"#.utf8),
        headers: [
          "Content-Type": "application/json", "Set-Cookie": "sid=sid-0a9b8c7d6e; Path=/; HttpOnly",
        ]))
    _ = try await stub.send(
      HTTPRequest(method: .post, url: url("https://api.example.com/v1/login")))
    let har = await stub.har()
    let text = try reviewWritten(har)
    #expect(text.contains(#""name": "Set-Cookie","#))
    #expect(!text.contains("sid-0a9b8c7d6e"), "written: \(text)")
  }

  /// Charles writes a form as `params` only. The password's param is hidden, and so is the
  /// response that repeats it (was not), as `writeCassette` (which rebuilds the form) hides it.
  @Test func aPasswordPostedAsParamsIsHiddenWhereTheResponseRepeatsIt() throws {
    let har = HAR(entries: [
      reviewEntry(
        "POST", "https://auth.example.org/login",
        requestHeaders: [
          HAR.Header(name: "Content-Type", value: "application/x-www-form-urlencoded")
        ],
        postData: HAR.PostData(
          mimeType: "application/x-www-form-urlencoded",
          params: [
            HAR.Param(name: "user", value: "rex"),
            HAR.Param(name: "password", value: "pw-31c4d5e6f7"),
          ]),
        status: 401, text: "wrong password pw-31c4d5e6f7 for rex")
    ])
    let file = temporaryCassette()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try har.writeCassette(to: file)
    let cassette = try String(contentsOf: file, encoding: .utf8)
    #expect(!cassette.contains("pw-31c4d5e6f7"))
    let text = try reviewWritten(har)
    #expect(!text.contains("pw-31c4d5e6f7"), "written: \(text)")
  }

  /// A form body whose type only `postData.mimeType` gives (no `Content-Type` header listed):
  /// `encoded()` and `writeCassette` hide the password (the cassette kept it).
  @Test func aFormPasswordIsHiddenInACassetteWhenOnlyPostDataGivesTheType() throws {
    let har = HAR(entries: [
      reviewEntry(
        "POST", "https://auth.example.org/login",
        postData: HAR.PostData(
          mimeType: "application/x-www-form-urlencoded", text: "user=rex&password=pw-7a6b5c4d3e"),
        text: "ok")
    ])
    let text = try reviewWritten(har)
    #expect(!text.contains("pw-7a6b5c4d3e"))
    let file = temporaryCassette()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try har.writeCassette(to: file)
    let cassette = try String(contentsOf: file, encoding: .utf8)
    #expect(!cassette.contains("pw-7a6b5c4d3e"), "cassette: \(cassette)")
  }

  /// A cookie listed in `request.cookies` without a `Cookie` header: `encoded()` hides it where
  /// the response repeats it, and so does `writeCassette` (did not).
  @Test func aCookieListedOnlyInTheCookiesArrayIsHiddenInACassette() throws {
    let har = HAR(entries: [
      reviewEntry(
        "GET", "https://api.example.com/v1/me",
        cookies: [HAR.Cookie(name: "sid", value: "sid-5a4b3c2d1e")],
        text: "hello, session sid-5a4b3c2d1e")
    ])
    let text = try reviewWritten(har)
    #expect(!text.contains("sid-5a4b3c2d1e"))
    let file = temporaryCassette()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try har.writeCassette(to: file)
    let cassette = try String(contentsOf: file, encoding: .utf8)
    #expect(!cassette.contains("sid-5a4b3c2d1e"), "cassette: \(cassette)")
  }

  /// Chrome writes a multipart form as its text and as params; the password is hidden in both
  /// (the text kept it).
  @Test func aPasswordInAMultipartBodyIsHidden() throws {
    let body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"user\"\r\n\r\nrex\r\n"
      + "--XyZ\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\npw-8e7f6a5b4c\r\n--XyZ--\r\n"
    let har = HAR(entries: [
      reviewEntry(
        "POST", "https://api.example.com/v1/login",
        postData: HAR.PostData(
          mimeType: "multipart/form-data; boundary=XyZ",
          params: [
            HAR.Param(name: "user", value: "rex"),
            HAR.Param(name: "password", value: "pw-8e7f6a5b4c"),
          ], text: body))
    ])
    let text = try reviewWritten(har)
    #expect(text.contains(#""value": "<redacted>""#))  // the param
    #expect(!text.contains("pw-8e7f6a5b4c"), "written: \(text)")
  }

  /// The URL hides `access%5Ftoken` (its name decoded), and so does the queryString array (it
  /// compared names undecoded).
  @Test func aQueryParameterWithAnEncodedNameIsHiddenInTheQueryString() throws {
    let har = HAR(entries: [
      reviewEntry(
        "GET", "https://api.example.com/v1/me?access%5Ftoken=at-2b3c4d5e6f",
        queryString: [HAR.QueryParameter(name: "access%5Ftoken", value: "at-2b3c4d5e6f")])
    ])
    let text = try reviewWritten(har)
    #expect(text.contains("access%5Ftoken=%3Credacted%3E"))
    #expect(!text.contains("at-2b3c4d5e6f"), "written: \(text)")
  }

  /// A body whose `encoding` says base64 but that does not decode is redacted as text, as the
  /// same body without the encoding is (was written as it came).
  @Test func aBodyThatDoesNotDecodeAsItsEncodingSaysIsNotWrittenAsItCame() throws {
    let body = #"{"access_token":"at-6c5d4e3f2a","token_type":"Bearer"}"#
    let plain = HAR(entries: [
      reviewEntry(
        "POST", "https://auth.example.org/oauth/token", mimeType: "application/json", text: body)
    ])
    let plainText = try reviewWritten(plain)
    #expect(!plainText.contains("at-6c5d4e3f2a"))
    let mislabelled = HAR(entries: [
      reviewEntry(
        "POST", "https://auth.example.org/oauth/token", mimeType: "application/json", text: body,
        encoding: "base64")
    ])
    let text = try reviewWritten(mislabelled)
    #expect(!text.contains("at-6c5d4e3f2a"), "written: \(text)")
  }

  /// A HAR from a browser is not redacted; replayed as a cassette, the error for an unmatched
  /// request and the unplayed list hide its recorded URLs' secrets (printed them whole).
  @Test func aReplayedHARsErrorsHideTheRecordedURLsSecrets() async throws {
    let har = HAR(entries: [
      reviewEntry("GET", "https://api.example.com/v1/me?access_token=at-0f1e2d3c4b", text: "{}")
    ])
    let cassette = try CassetteTransport(har: har)
    let error = try await #require(throws: CassetteError.self) {
      _ = try await cassette.send(HTTPRequest(url: url("https://api.example.com/v1/other")))
    }
    let unplayed = await cassette.unplayedExchanges
    #expect(!error.description.contains("at-0f1e2d3c4b"), "error: \(error)")
    #expect(!unplayed.joined().contains("at-0f1e2d3c4b"), "unplayed: \(unplayed)")
  }

  /// "Messages never quote a header value": a tool that wrote a whole header line as the name,
  /// or a document broken so that a value stands where a key should.
  @Test func errorsNeverQuoteACredentialWrittenWhereANameShouldBe() throws {
    let har = try HAR(
      data: harDocument(entries: [
        harEntry(requestHeaders: #"[{"name":"Authorization: Bearer tok-9a8b7c6d5e","value":""}]"#)
      ]))
    let nameError = try #require(throws: HARError.self) { _ = try CassetteTransport(har: har) }
    #expect(nameError.field == "log.entries[0].request.headers[0].name")
    let broken = Data(
      #"{"log":{"entries":[{"request":{"headers":[{"name":"Authorization","value":"x","Bearer tok-1f2e3d4c5b"}]}}]}}"#
        .utf8)
    let keyError = try #require(throws: HARError.self) { _ = try HAR(data: broken) }
    #expect(keyError.kind == .invalidJSON)
    let requestLine = try HAR(
      data: harDocument(entries: [
        harEntry(method: "GET /v1/me?access_token=at-8b9c0d1e2f HTTP/1.1")
      ]))
    let methodError = try #require(throws: HARError.self) {
      _ = try CassetteTransport(har: requestLine)
    }
    #expect(methodError.field == "log.entries[0].request.method")
    #expect(!nameError.description.contains("tok-9a8b7c6d5e"), "\(nameError)")
    #expect(!keyError.description.contains("tok-1f2e3d4c5b"), "\(keyError)")
    #expect(!methodError.description.contains("at-8b9c0d1e2f"), "\(methodError)")
  }

  /// A URL written in a comment has its token hidden (comments were written as they were).
  @Test func aTokenInACommentsURLIsHidden() throws {
    let har = HAR(entries: [
      reviewEntry(
        "GET", "https://api.example.com/v1/me",
        comment: "retried after https://api.example.com/v1/me?access_token=at-4d3c2b1a0f")
    ])
    let text = try reviewWritten(har)
    #expect(!text.contains("at-4d3c2b1a0f"), "written: \(text)")
  }

  /// A HAR stub route that a request misses reports what the request sent instead, hiding what
  /// the request's own redaction (the client's) hides, as every other matcher's report does
  /// (hid only what `Redaction.default` hides).
  @Test func aMissedRouteReportHidesWhatTheRequestsRedactionNames() async throws {
    let stub = StubTransport()
    try await stub.on(
      har: HAR(entries: [
        reviewEntry("GET", "https://api.example.com/v1/me?sessionKey=recorded-1111", text: "{}")
      ]))
    let error = try await #require(throws: UnmatchedRequest.self) {
      _ = try await stub.send(
        HTTPRequest(
          url: url("https://api.example.com/v1/me?sessionKey=sk-6f5e4d3c2b"),
          redaction: Redaction.default.merging(Redaction(queryParameters: ["sessionKey"]))))
    }
    #expect(
      error.description.hasPrefix(
        "StubTransport has no route for GET https://api.example.com/v1/me?sessionKey=%3Credacted%3E"
      )
        || error.description.hasPrefix(
          "StubTransport has no route for GET https://api.example.com/v1/me?sessionKey=<redacted>")
    )
    for form in printedForms(of: error) {
      #expect(!form.contains("sk-6f5e4d3c2b"), "printed: \(form)")
    }
  }

  /// Tools' `_` extras (Chrome's `_initiator`, `_webSocketMessages`) are dropped on reading, so
  /// the secrets in them never reach a written file.
  @Test func secretsInToolExtrasAreNeverWritten() throws {
    let entry = harEntry(
      extra:
        #","_initiator":{"type":"script","url":"https://app.example.com/?token=ext-1a2b3c4d"},"#
        + #""_webSocketMessages":[{"type":"send","time":1,"opcode":1,"data":"{\"token\":\"ext-1a2b3c4d\"}"}]"#
    )
    let document = harDocument(entries: [entry])
    #expect(utf8Text(document).contains("ext-1a2b3c4d"))
    let text = try reviewWritten(try HAR(data: document))
    #expect(!text.contains("ext-1a2b3c4d"))
    #expect(!text.contains("_initiator"))
  }

  /// A server that echoes the credential in a binary (base64) body: decoded, scrubbed and
  /// encoded again.
  @Test func aCredentialEchoedInABase64BodyIsHidden() throws {
    let echoed = Data("you sent Bearer tok-3e4f5a6b7c".utf8).base64EncodedString()
    let har = HAR(entries: [
      reviewEntry(
        "GET", "https://api.example.com/v1/echo",
        requestHeaders: [HAR.Header(name: "Authorization", value: "Bearer tok-3e4f5a6b7c")],
        mimeType: "application/octet-stream", text: echoed, encoding: "base64")
    ])
    let bytes = try har.encoded()
    #expect(!utf8Text(bytes).contains(echoed))
    let reread = try HAR(data: bytes)
    let content = reread.log.entries[0].response.content
    #expect(content.encoding == "base64")
    #expect(
      content.text.flatMap { Data(base64Encoded: $0) }.map(utf8Text) == "you sent <redacted>")
    #expect(content.size == "you sent <redacted>".utf8.count)
  }

  // MARK: One caller's data served to another

  static let twoUsers = HAR(entries: [
    reviewEntry(
      "GET", "https://alice.example.com/v1/me", mimeType: "application/json",
      text: #"{"user":"alice"}"#),
    reviewEntry(
      "GET", "https://bob.example.com/v1/me", mimeType: "application/json", text: #"{"user":"bob"}"#
    ),
  ])

  /// Stub routes from a HAR match the scheme, host and port too: two hosts' `/v1/me` are two
  /// routes, another host gets no answer, and the answer carries the request's URL (one route
  /// answered any host, with the recorded URL).
  @Test func stubRoutesNeverAnswerOneHostWithAnothersEntry() async throws {
    let stub = StubTransport()
    try await stub.on(har: Self.twoUsers)
    let first = try await stub.send(HTTPRequest(url: url("https://alice.example.com/v1/me")))
    let second = try await stub.send(HTTPRequest(url: url("https://alice.example.com/v1/me")))
    let stranger = try? await stub.send(HTTPRequest(url: url("https://evil.example.net/v1/me")))
    #expect(reviewBody(first) == #"{"user":"alice"}"#)
    #expect(
      reviewBody(second) == #"{"user":"alice"}"#, "answer: \(second.url?.absoluteString ?? "")")
    #expect(second.url?.host == "alice.example.com")
    #expect(stranger == nil, "evil.example.net got \(reviewBody(stranger) ?? "nothing")")
  }

  /// The same through a cassette: the second request to one host never plays the other host's
  /// entry (`Matching.har` compares the host).
  @Test func aCassetteNeverAnswersOneHostWithAnothersEntry() async throws {
    let cassette = try CassetteTransport(har: Self.twoUsers)
    let first = try await cassette.send(HTTPRequest(url: url("https://alice.example.com/v1/me")))
    let second = try? await cassette.send(HTTPRequest(url: url("https://alice.example.com/v1/me")))
    #expect(reviewBody(first) == #"{"user":"alice"}"#)
    #expect(second == nil, "the second request got \(reviewBody(second) ?? "nothing")")
  }

  static let twoTokens = HAR(entries: [
    reviewEntry(
      "GET", "https://api.example.com/v1/me",
      requestHeaders: [HAR.Header(name: "Authorization", value: "Bearer alice-tok-1111")],
      mimeType: "application/json", text: #"{"user":"alice"}"#),
    reviewEntry(
      "GET", "https://api.example.com/v1/me",
      requestHeaders: [HAR.Header(name: "Authorization", value: "Bearer bob-tok-2222")],
      mimeType: "application/json", text: #"{"user":"bob"}"#),
  ])

  /// Bob's request, sent first, gets the answer recorded for Bob's token, not Alice's: entries
  /// that disagree on a credential are routes of their own.
  @Test func stubRoutesNeverAnswerOneUsersTokenWithAnothersEntry() async throws {
    let stub = StubTransport()
    try await stub.on(har: Self.twoTokens)
    let bob = try await stub.send(
      HTTPRequest(
        url: url("https://api.example.com/v1/me"), headers: ["Authorization": "Bearer bob-tok-2222"]
      ))
    #expect(reviewBody(bob) == #"{"user":"bob"}"#, "bob got \(reviewBody(bob) ?? "")")
  }

  /// With `.headers` matching, a cassette of an unredacted HAR tells the two tokens apart.
  @Test func aCassetteMatchingHeadersTellsTokensApart() async throws {
    let cassette = try CassetteTransport(
      har: Self.twoTokens, matching: [.method, .path, .query, .headers])
    let bob = try await cassette.send(
      HTTPRequest(
        url: url("https://api.example.com/v1/me"), headers: ["Authorization": "Bearer bob-tok-2222"]
      ))
    #expect(reviewBody(bob) == #"{"user":"bob"}"#)
    await #expect(throws: CassetteError.self) {
      _ = try await cassette.send(
        HTTPRequest(
          url: url("https://api.example.com/v1/me"),
          headers: ["Authorization": "Bearer mallory-3333"]))
    }
  }

  /// Two logins that differ only in their body are two routes: Bob's login, sent first, gets
  /// Bob's session, not Alice's.
  @Test func stubRoutesNeverAnswerOneBodyWithAnothersEntry() async throws {
    func login(_ user: String) -> HAR.Entry {
      reviewEntry(
        "POST", "https://api.example.com/v1/login",
        postData: HAR.PostData(mimeType: "application/json", text: #"{"user":"\#(user)"}"#),
        mimeType: "application/json", text: #"{"session":"\#(user)-session"}"#)
    }
    let stub = StubTransport()
    try await stub.on(har: HAR(entries: [login("alice"), login("bob")]))
    let bob = try await stub.send(
      HTTPRequest(
        method: .post, url: url("https://api.example.com/v1/login"),
        headers: ["Content-Type": "application/json"], body: Data(#"{"user":"bob"}"#.utf8)))
    #expect(reviewBody(bob) == #"{"session":"bob-session"}"#, "bob got \(reviewBody(bob) ?? "")")
  }

  // MARK: Odd input

  @Test(arguments: [
    (#"{"log":{"entries":[],"comment":"a\uD800b"}}"#, "line 1, column 40: unpaired surrogate"),
    (#"{"log":{"entries":[],"comment":"a\uDC00b"}}"#, #"line 1, column 40: invalid \u escape"#),
  ])
  func aLoneSurrogateIsRefusedWithItsPlace(_ document: String, _ reason: String) throws {
    let error = try #require(throws: HARError.self) { _ = try HAR(data: Data(document.utf8)) }
    #expect(error == HARError(.invalidJSON, reason: "not valid JSON: \(reason)"))
  }

  @Test func invalidUTF8IsRefusedWithItsPlace() throws {
    var document = Data(#"{"log":{"entries":[],"comment":"a"#.utf8)
    document.append(0xFF)
    document.append(contentsOf: Data(#"b"}}"#.utf8))
    let error = try #require(throws: HARError.self) { _ = try HAR(data: document) }
    #expect(
      error
        == HARError(
          .invalidJSON, reason: "not valid JSON: line 1, column 36: invalid UTF-8 in a string"))
  }

  /// Repeated keys: the first wins (JavaScript's `JSON.parse`, and so DevTools, takes the last).
  @Test func aRepeatedKeyReadsItsFirstValue() throws {
    let entry = harEntry().replacingOccurrences(
      of: #""status":200"#, with: #""status":200,"status":500"#)
    let har = try HAR(data: harDocument(entries: [entry]))
    #expect(har.log.entries[0].response.status == 200)
  }

  /// A number where HAR has a string (a header value) keeps its digits (went through a
  /// `Double`).
  @Test func aNumberReadAsTextKeepsItsDigits() throws {
    let har = try HAR(
      data: harDocument(entries: [
        harEntry(
          responseHeaders:
            #"[{"name":"X-Request-Id","value":12345678901234567890},{"name":"X-Version","value":1.10}]"#
        )
      ]))
    let values = har.log.entries[0].response.headers.map(\.value)
    #expect(values == ["12345678901234567890", "1.10"], "read: \(values)")
  }

  /// February 31st is not a date, and is refused (was read as March 3rd).
  @Test func aDayPastTheEndOfItsMonthIsRefused() throws {
    let entry = harEntry().replacingOccurrences(
      of: "2024-01-02T03:04:05.678Z", with: "2023-02-31T00:00:00Z")
    let har = try? HAR(data: harDocument(entries: [entry]))
    let writtenAsMarch3 = har.map {
      utf8Text((try? $0.encoded()) ?? Data()).contains(
        #""startedDateTime": "2023-03-03T00:00:00.000Z""#)
    }
    #expect(har == nil, "read, and written as 2023-03-03: \(writtenAsMarch3 ?? false)")
  }

  /// Errand writes HAR 1.2; an archive read as 1.1 is written saying 1.2 (said 1.1).
  @Test func whatIsWrittenSaysVersion12() throws {
    let document = Data(
      #"{"log":{"version":"1.1","creator":{"name":"old","version":"1"},"entries":[]}}"#.utf8)
    let text = try reviewWritten(try HAR(data: document))
    #expect(text.contains(#""version": "1.2""#), "written: \(text)")
  }

  /// Written, read and written again: the same bytes, for each archive the probes above build.
  @Test(arguments: [
    HARReviewTests.twoUsers, HARReviewTests.twoTokens,
    HAR(entries: [
      reviewEntry(
        "POST", "https://auth.example.org/oauth/token", mimeType: "application/json",
        text: #"{"access_token":"at-6c5d4e3f2a"}"#, encoding: "base64"),
      reviewEntry(
        "GET", "https://api.example.com/v1/me?access_token=at-5e4d3c2b1a",
        requestHeaders: [
          HAR.Header(name: ":path", value: "/v1/me?access_token=at-5e4d3c2b1a"),
          HAR.Header(name: "Authorization", value: "Basic cmV4Omh1bnRlcjI="),
        ],
        cookies: [HAR.Cookie(name: "sid", value: "sid-5a4b3c2d1e")],
        responseHeaders: [HAR.Header(name: "Location", value: "/next?token=tk-11112222")],
        mimeType: "application/json",
        text: #"{"token":"tk-33334444","echo":"rex hunter2 sid-5a4b3c2d1e","n":1.50}"#),
    ]),
  ])
  func writingReadingAndWritingAgainGivesTheSameBytes(_ har: HAR) throws {
    let first = try har.encoded()
    #expect(try HAR(data: first).encoded() == first)
  }

  // MARK: Files

  /// A link where the file is to be written is replaced by the file: the file it named is left
  /// alone.
  @Test func writingOverALinkLeavesItsTargetAlone() throws {
    let folder = temporaryCassette().deletingLastPathComponent()
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let victim = folder.appendingPathComponent("victim.txt")
    try Data("keep me".utf8).write(to: victim)
    let link = folder.appendingPathComponent("session.har")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)
    try HAR(entries: []).write(to: link)
    #expect(try String(contentsOf: victim, encoding: .utf8) == "keep me")
    let type =
      try FileManager.default.attributesOfItem(atPath: link.path)[.type] as? FileAttributeType
    #expect(type == .typeRegular)
    #expect(try HAR(contentsOf: link).log.entries.isEmpty)
  }

  /// Writing where a folder is fails, names the file, and leaves nothing behind.
  @Test func writingOverAFolderFailsAndLeavesNothingBehind() throws {
    let folder = temporaryCassette().deletingLastPathComponent()
    let target = folder.appendingPathComponent("taken.har")
    try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let error = try #require(throws: HARError.self) { try HAR(entries: []).write(to: target) }
    #expect(error.kind == .unwritable)
    #expect(error.description.hasPrefix("HAR: \(target.path) cannot be written ("))
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["taken.har"])
    #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
  }

  // MARK: Growth

  /// One unmatched request against a cassette of a large HAR: the error lists 20 entries and
  /// counts the rest (listed every one).
  @Test(.ownThread) func anUnmatchedRequestsErrorStaysShortForALargeHAR() async throws {
    let count = 5_000
    let har = HAR(
      entries: (0..<count).map { index in
        reviewEntry("GET", "https://api.example.com/v1/items/\(index)", text: "\(index)")
      })
    let cassette = try CassetteTransport(har: har)
    let error = try await #require(throws: CassetteError.self) {
      _ = try await cassette.send(HTTPRequest(url: url("https://api.example.com/v1/other")))
    }
    let lines = error.description.split(separator: "\n").count
    #expect(lines <= 50, "\(lines) lines, \(error.description.utf8.count) bytes")
  }

  /// A secret a body repeats 80,000 times is hidden at every repeat. How the time grows with the
  /// repeats (it was quadratic: 80,000 took 2.7 s) is bounded in `WallClockTests`, where
  /// wall-clock bounds run alone.
  @Test(.ownThread) func aSecretRepeatedManyTimesIsHiddenEverywhere() async throws {
    let har = HAR(entries: [
      reviewEntry(
        "GET", "https://api.example.com/v1/echo",
        requestHeaders: [HAR.Header(name: "Authorization", value: "Bearer tok-q1w2e3r4")],
        text: String(repeating: "tok-q1w2e3r4 ", count: 80_000))
    ])
    let text = try #require(har.redacted().log.entries[0].response.content.text)
    #expect(!text.contains("tok-q1w2e3r4"))
    #expect(text.components(separatedBy: "<redacted>").count - 1 == 80_000)
  }
}
