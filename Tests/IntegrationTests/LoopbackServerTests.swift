import Errand
import Foundation
import LoopbackServer
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The loopback server as code that owns its own URLSession uses it.
@Suite(.timeLimit(.minutes(3))) struct LoopbackServerTests {
  @Test func enqueuedResponsesAnswerInOrderAndRequestsComeBackOneByOne() async throws {
    let server = try LoopbackServer()
    defer { server.stop() }
    server.enqueue(.json(#"{"name":"Rex"}"#), ScriptedResponse(status: 503))
    let session = URLSession(configuration: .ephemeral)
    var request = URLRequest(url: server.url("/dogs/1?full=1"))
    request.httpMethod = "PUT"
    request.httpBody = Data("hello".utf8)
    request.setValue("abc", forHTTPHeaderField: "X-Trace")
    let (data, first) = try await session.data(for: request)
    #expect(String(decoding: data, as: UTF8.self) == #"{"name":"Rex"}"#)
    #expect((first as? HTTPURLResponse)?.statusCode == 200)
    let (_, second) = try await session.data(from: server.url("/dogs/2"))
    #expect((second as? HTTPURLResponse)?.statusCode == 503)
    let (empty, third) = try await session.data(from: server.url("/dogs/3"))
    #expect((third as? HTTPURLResponse)?.statusCode == 500)
    #expect(String(decoding: empty, as: UTF8.self) == "nothing enqueued")

    let taken = try await server.takeRequest()
    #expect(taken.method == "PUT")
    #expect(taken.path == "/dogs/1")
    #expect(taken.target == "/dogs/1?full=1")
    #expect(taken.headers["x-trace"] == "abc")
    #expect(taken.body == Data("hello".utf8))
    #expect(try await server.takeRequest().path == "/dogs/2")
    #expect(try await server.takeRequest().path == "/dogs/3")
  }

  @Test func takeRequestWaitsThenSaysNothingCame() async throws {
    let server = try LoopbackServer()
    defer { server.stop() }
    let error = await #expect(throws: LoopbackServer.NoRequest.self) {
      _ = try await server.takeRequest(timeout: .milliseconds(50))
    }
    #expect(error?.description.hasPrefix("LoopbackServer received no new request within") == true)
  }

  @Test func aRouterAnswersByRequest() async throws {
    let server = try LoopbackServer { request in
      request.path == "/ping" ? .text("pong") : ScriptedResponse(status: 404)
    }
    defer { server.stop() }
    let (data, _) = try await URLSession(configuration: .ephemeral).data(from: server.url("/ping"))
    #expect(String(decoding: data, as: UTF8.self) == "pong")
  }
}
