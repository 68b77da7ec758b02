import Errand
import Foundation

/// The checks of the suite's client (`checkResponse` and `checkServerRequests` in
/// `test-engine/client/test.mjs`), in its order: the first that fails ends the test.
enum CacheTestChecks {
  /// A failed check: of the behaviour under test, or of its setup.
  struct Failure: Error {
    var outcome: CacheTestOutcome
  }

  /// The suite's `assert`: nothing when `condition` holds, else a failure (a setup failure when
  /// `setup`).
  static func expect(_ setup: Bool, _ condition: Bool, _ message: @autoclosure () -> String) throws
  {
    guard !condition else { return }
    throw Failure(outcome: setup ? .setupFailed(message()) : .failed(message()))
  }

  /// JavaScript's `parseInt`: an optional sign and leading digits after white space, else `nil`
  /// (NaN).
  static func parseInt(_ text: String?) -> Int? {
    guard let text else { return nil }
    var rest = Substring(text).drop { $0 == " " || $0 == "\t" || $0 == "\n" }
    var sign = 1
    if let first = rest.first, first == "-" || first == "+" {
      sign = first == "-" ? -1 : 1
      rest = rest.dropFirst()
    }
    let digits = rest.prefix { $0.isASCII && $0.isNumber }
    guard !digits.isEmpty else { return nil }
    return Int(digits.prefix(18)).map { $0 * sign }
  }

  /// Check response `number` as the client receives it.
  static func check(
    _ response: CacheTestResponse, number: Int, config: CacheTestRequest, uuid: String
  ) throws {
    let served = parseInt(response.get("Server-Request-Count"))
    if let numbers = response.get("Request-Numbers") {
      let list = numbers.split(separator: " ")
      if list.count != Set(list).count {
        throw Failure(outcome: .retried)
      }
    }
    let typeSetup = config.isSetup("expected_type")
    switch config.expectedType {
    case .cached:
      if !(response.status == 304 && served == nil) {
        try expect(
          typeSetup, served.map { $0 < number } ?? false,
          "Response \(number) does not come from cache")
      }
    case .notCached:
      try expect(typeSetup, served == number, "Response \(number) comes from cache")
    case .lmValidated, .etagValidated, nil:
      break
    }
    let status = response.status.map(String.init) ?? "undefined"
    if config.hasExpectedStatus {
      if let expected = config.expectedStatus {
        try expect(
          config.isSetup("expected_status"), response.status == expected,
          "Response \(number) status is \(status), not \(expected)")
      }
    } else if let configured = config.responseStatus {
      try expect(
        true, response.status == configured,
        "Response \(number) status is \(status), not \(configured)")
    } else if response.status == 999 {
      try expect(
        typeSetup, false, "Request \(number) should have been conditional, but it was not.")
    } else {
      try expect(true, response.status == 200, "Response \(number) status is \(status), not 200")
    }
    try checkHeaders(response, number: number, config: config)
    try checkBody(response, config: config, uuid: uuid)
  }

  /// `expected_response_headers` and `expected_response_headers_missing`.
  static func checkHeaders(
    _ response: CacheTestResponse, number: Int, config: CacheTestRequest
  ) throws {
    let setup = config.isSetup("expected_response_headers")
    for expected in config.expectedResponseHeaders ?? [] {
      let value = response.get(expected.name)
      switch expected.test {
      case .present:
        try expect(setup, value != nil, "Response \(number) \(expected.name) header not present.")
      case .greater:
        try expect(setup, value != nil, "Response \(number) \(expected.name) header not present.")
        let bound = expected.number ?? 0
        try expect(
          setup, parseInt(value).map { $0 > bound } ?? false,
          "Response \(number) header \(expected.name) is \(value ?? "null"), should be bigger than \(bound)"
        )
      case .same:
        try expect(setup, value != nil, "Response \(number) \(expected.name) header not present.")
        let other = response.get(expected.other ?? "")
        try expect(
          setup, value == other,
          "Response \(number) header \(expected.name) is \(value ?? "null"), should match \(expected.other ?? "")"
        )
      case .equals:
        let header = CacheTestHeader(
          name: expected.name, value: expected.value, delta: expected.delta)
        let wanted = CacheTestOrigin.render(
          header, now: response.get("Server-Now").flatMap { Int64($0) },
          base: response.get("Server-Base-Url"), config: config
        ).value
        try expect(
          setup, value == wanted,
          "Response \(number) header \(expected.name) is \"\(value ?? "null")\", not \"\(wanted ?? "")\""
        )
      }
    }
    let missingSetup = config.isSetup("expected_response_headers_missing")
    for missing in config.expectedResponseHeadersMissing ?? [] {
      let value = response.get(missing.name)
      if let unwanted = missing.value {
        try expect(
          missingSetup, !(value ?? "").contains(unwanted),
          "Response \(number) header \(missing.name) still has value \"\(value ?? "")\"")
      } else {
        try expect(
          missingSetup, value == nil,
          "Response \(number) includes unexpected header \(missing.name): \"\(value ?? "")\"")
      }
    }
  }

  /// The body: what the test expects, else the configured body, else the test's UUID (the
  /// server's default body), except for a status without a body or a `HEAD`.
  static func checkBody(_ response: CacheTestResponse, config: CacheTestRequest, uuid: String)
    throws
  {
    if config.checkBody == false { return }
    if config.hasExpectedResponseText {
      if let expected = config.expectedResponseText {
        try expect(
          config.isSetup("expected_response_text"), response.body == expected,
          "Response body is \"\(response.body)\", not \"\(expected)\"")
      }
    } else if config.hasResponseBody, let configured = config.responseBody {
      try expect(
        true, response.body == configured,
        "Response body is \"\(response.body)\", not \"\(configured)\"")
    } else if !CacheTestOrigin.noBodyStatuses.contains(response.status ?? 0),
      config.requestMethod != "HEAD"
    {
      try expect(
        true, response.body == uuid, "Response body is \"\(response.body)\", not \"\(uuid)\"")
    }
  }

  /// What the server saw, request by request (`checkServerRequests`): a request expected from
  /// the cache is skipped; the others are matched with the server's requests in order.
  static func checkServer(
    _ requests: [CacheTestRequest], responses: [CacheTestResponse],
    seen: [CacheTestOrigin.Seen]
  ) throws {
    var index = 0
    for (offset, config) in requests.enumerated() {
      let number = offset + 1
      let typeSetup = config.isSetup("expected_type")
      if config.expectedType == .cached { continue }
      let served = seen.indices.contains(index) ? seen[index] : nil
      var validators: [String] = []
      switch config.expectedType {
      case .notCached:
        guard let served else {
          throw Failure(outcome: .error("TypeError: request \(number) has no server state"))
        }
        try expect(
          typeSetup, served.requestNumber == number,
          "Response \(number) comes from cache (\(served.requestNumber.map(String.init) ?? "NaN") on server)"
        )
      case .etagValidated: validators.append("If-None-Match")
      case .lmValidated: validators.append("If-Modified-Since")
      case .cached, nil: break
      }
      index += 1
      for validator in validators {
        try expect(typeSetup, served != nil, "request \(number) wasn't sent to server")
        try expect(
          typeSetup, served?.headers[validator] != nil,
          "request \(number) doesn't have \(validator.lowercased()) header")
      }
      if let expected = config.expectedRequestHeaders {
        guard let served else {
          throw Failure(outcome: .error("TypeError: request \(number) has no server state"))
        }
        for header in expected {
          let value = value(of: header.name, in: served)
          if let wanted = header.value {
            try expect(
              config.isSetup("expected_request_headers"), value == wanted,
              "Request \(number) header \(header.name) is \"\(value ?? "undefined")\", not \"\(wanted)\""
            )
          } else {
            try expect(
              config.isSetup("expected_request_headers"), value != nil,
              "Request \(number) \(header.name) header not present.")
          }
        }
      }
      if let missing = config.expectedRequestHeadersMissing {
        guard let served else {
          throw Failure(outcome: .error("TypeError: request \(number) has no server state"))
        }
        for header in missing {
          let value = value(of: header.name, in: served)
          try expect(
            config.isSetup("expected_request_headers_missing"),
            header.value.map { value != $0 } ?? (value == nil),
            "Request \(number) header \(header.name) present.")
        }
      }
      // A server that closed the connection sent no headers to compare.
      if let served, config.disconnect != true {
        let response = responses[offset]
        for sent in served.checkedHeaders where sent.name.lowercased() != "date" {
          let received = response.get(sent.name)
          try expect(
            true, received == sent.value,
            "Response \(number) header \(sent.name) is \"\(received ?? "null")\", not \"\(sent.value)\""
          )
        }
      }
      if let method = config.expectedMethod {
        try expect(
          config.isSetup("expected_method"), served?.method == method,
          "Request \(number) had method \(served?.method ?? "undefined"), not \(method)")
      }
    }
  }

  /// A request header as Node's server reads it: the values of a name joined by `", "`.
  static func value(of name: String, in served: CacheTestOrigin.Seen) -> String? {
    let values = served.headers.values(for: name)
    return values.isEmpty ? nil : values.joined(separator: ", ")
  }
}
