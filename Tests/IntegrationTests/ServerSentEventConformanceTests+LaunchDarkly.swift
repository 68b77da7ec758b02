import Errand

/// Streams from LaunchDarkly's SSE contract tests (`launchdarkly/sse-contract-tests`,
/// `ssetests/tests_basic_parsing.go` and `ssetests/tests_linefeeds.go`). Their chunkings (two
/// pieces, one- and two-byte pieces, a CR at a chunk's end) are covered by reading every stream
/// split at every byte boundary and byte by byte.
extension ServerSentEventConformanceTests {
  static let launchDarkly = "LaunchDarkly sse-contract-tests"

  static let launchDarklyCases: [Case] = [
    Case(
      source: launchDarkly, name: "two one-line messages in one chunk",
      wire: "data: Hello\n\ndata: World\n\n",
      events: [ServerSentEvent(data: "Hello"), ServerSentEvent(data: "World")]),
    Case(
      source: launchDarkly, name: "one two-line message", wire: "data: Hello\ndata:World\n\n",
      events: [ServerSentEvent(data: "Hello\nWorld")]),
    Case(
      source: launchDarkly, name: "empty data", wire: "data:\n\n",
      events: [ServerSentEvent(data: "")]),
    Case(
      source: launchDarkly, name: "event with type and ID",
      wire: "event: greeting\nid: abc\ndata: Hello\n\n",
      events: [ServerSentEvent(event: "greeting", data: "Hello", id: "abc")]),
    Case(
      source: launchDarkly, name: "ID field is ignored if it contains a null",
      wire: "id: a\0bc\ndata: Hello\n\n", events: [ServerSentEvent(data: "Hello")]),
    Case(
      source: launchDarkly, name: "last ID persists if not overridden by later event",
      wire: "id: abc\ndata: first\n\ndata: second\n\n",
      events: [
        ServerSentEvent(data: "first", id: "abc"), ServerSentEvent(data: "second", id: "abc"),
      ]),
    Case(
      source: launchDarkly, name: "last ID can be overridden by an empty value",
      wire: "id: abc\ndata: first\n\nid: \ndata: second\n\n",
      events: [ServerSentEvent(data: "first", id: "abc"), ServerSentEvent(data: "second")]),
    Case(
      source: launchDarkly, name: "fields in reverse order",
      wire: "data: Hello\nid: abc\nevent: greeting\n\n",
      events: [ServerSentEvent(event: "greeting", data: "Hello", id: "abc")]),
    Case(
      source: launchDarkly, name: "unknown field is ignored",
      wire: "event: greeting\ncolor: blue\ndata: Hello\n\n",
      events: [ServerSentEvent(event: "greeting", data: "Hello")]),
    Case(
      source: launchDarkly, name: "fields with extra leading space",
      wire: "event:  greeting\ndata:  Hello\n\n",
      events: [ServerSentEvent(event: " greeting", data: " Hello")]),
    Case(
      source: launchDarkly, name: "multi-byte characters", wire: "data: €豆腐\n\n",
      events: [ServerSentEvent(data: "€豆腐")]),
    Case(
      source: launchDarkly, name: "many messages in rapid succession",
      wire: (0..<100).map { "data: message \($0)\n\n" }.joined(),
      events: (0..<100).map { ServerSentEvent(data: "message \($0)") }),
    Case(
      source: launchDarkly, name: "CR separator: one-line event + two-line event",
      wire: "data: event 1\r\rdata: event 2 line 1\rdata: event 2 line 2\r\r",
      events: [
        ServerSentEvent(data: "event 1"), ServerSentEvent(data: "event 2 line 1\nevent 2 line 2"),
      ]),
    Case(
      source: launchDarkly, name: "CRLF separator: 3-line event with empty line at beginning",
      wire: "data:\r\ndata: line2\r\ndata: line3\r\n\r\n",
      events: [ServerSentEvent(data: "\nline2\nline3")]),
    Case(
      source: launchDarkly, name: "CR separator: 3-line event with empty line in middle",
      wire: "data: line1\rdata:\rdata: line3\r\r", events: [ServerSentEvent(data: "line1\n\nline3")]
    ),
    Case(
      source: launchDarkly, name: "CRLF separator: ignores 2 extra empty lines",
      wire: "data: event 1\r\n\r\n\r\n\r\ndata: event 2\r\n\r\n",
      events: [ServerSentEvent(data: "event 1"), ServerSentEvent(data: "event 2")]),
    Case(
      source: launchDarkly, name: "CRLF where CR is end of 1 chunk",
      wire: "data: Hello\r\ndata: World\r\n\r\ndata: OK\r\n\r\n",
      events: [ServerSentEvent(data: "Hello\nWorld"), ServerSentEvent(data: "OK")]),
  ]
}
