#if os(Linux)
  import Foundation
  import Testing

  @testable import ErrandCurl

  /// CurlTransport checks every option it sets: a refused one stops the transfer with an error
  /// naming it, and a libcurl too old for `CURLOPT_PROTOCOLS_STR` is restricted to http and https
  /// with the older bitmask instead of running unrestricted.
  @Suite(.timeLimit(.minutes(3))) struct CurlOptionTests {
    /// What `restrictToHTTP` asked libcurl for, in order.
    final class Recorder: @unchecked Sendable {
      var calls: [String] = []
    }

    /// What libcurl answers to the string and the bitmask option, and what follows.
    struct Case: Sendable, CustomTestStringConvertible {
      var string: Int32
      var bitmask: Int32
      var calls: [String]
      var refused: String?
      var testDescription: String { "CURLcode \(string), then \(bitmask)" }
    }

    static let cases = [
      Case(string: 0, bitmask: 0, calls: ["CURLOPT_PROTOCOLS_STR=http,https"]),
      Case(
        string: 48, bitmask: 0,
        calls: ["CURLOPT_PROTOCOLS_STR=http,https", "CURLOPT_PROTOCOLS=3"]),
      Case(
        string: 48, bitmask: 48,
        calls: ["CURLOPT_PROTOCOLS_STR=http,https", "CURLOPT_PROTOCOLS=3"],
        refused: "CURLOPT_PROTOCOLS"),
      Case(
        string: 43, bitmask: 0, calls: ["CURLOPT_PROTOCOLS_STR=http,https"],
        refused: "CURLOPT_PROTOCOLS_STR"),
    ]

    @Test(arguments: cases)
    func protocolsAreRestrictedOrNothingRuns(_ answer: Case) throws {
      let transport = CurlTransport()  // loads libcurl, whose words the error quotes
      _ = transport
      let recorder = Recorder()
      let restrict = {
        try CurlTransfer.restrictToHTTP(
          setString: { option, value in
            recorder.calls.append("\(CurlOption.names[option] ?? "?")=\(value)")
            return answer.string
          },
          setLong: { option, value in
            recorder.calls.append("\(CurlOption.names[option] ?? "?")=\(value)")
            return answer.bitmask
          })
      }
      if let refused = answer.refused {
        let error = try #require(throws: CurlOptionRefused.self) { try restrict() }
        #expect(error.option == refused)
        #expect(error.localizedDescription.hasPrefix("libcurl refused \(refused) (CURLcode "))
        #expect(error.localizedDescription.hasSuffix("did not start the transfer without it"))
      } else {
        try restrict()
      }
      #expect(recorder.calls == answer.calls)
    }
  }
#endif
