import Errand
import ErrandTesting
import Foundation
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// watchOS runs no custom URLProtocol, and StubURLProtocol is unavailable there.
#if !os(watchOS)
  @Suite(.timeLimit(.minutes(3))) struct StubURLProtocolTests {
    @Test func answersAppURLSessionCodeFromTheStub() async throws {
      let stub = StubTransport()
      await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
      let session = URLSession(configuration: StubURLProtocol.configuration(for: stub))
      let (data, response) = try await session.data(
        from: URL(string: "https://api.example.com/v1/dogs")!)
      #expect((response as? HTTPURLResponse)?.statusCode == 200)
      #expect(
        (response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type")
          == "application/json")
      #expect(try JSONDecoder().decode([Dog].self, from: data) == [Dog(name: "Rex")])
    }

    @Test func requestBodiesReachTheStub() async throws {
      let stub = StubTransport { request in .status(201, body: request.body ?? Data(), headers: [:])
      }
      let session = URLSession(configuration: StubURLProtocol.configuration(for: stub))
      var urlRequest = URLRequest(url: URL(string: "https://api.example.com/v1/dogs")!)
      urlRequest.httpMethod = "POST"
      urlRequest.httpBody = Data(#"{"name":"Rex"}"#.utf8)
      urlRequest.setValue("abc", forHTTPHeaderField: "X-Trace")
      let (data, _) = try await session.data(for: urlRequest)
      #expect(data == Data(#"{"name":"Rex"}"#.utf8))
      let received = try await stub.nextRequest()
      #expect(received.method == .post)
      #expect(received.body == Data(#"{"name":"Rex"}"#.utf8))
      #expect(received.headers["X-Trace"] == "abc")
    }

    @Test func stubErrorsReachURLSession() async throws {
      let stub = StubTransport { _ in .notConnected }
      let session = URLSession(configuration: StubURLProtocol.configuration(for: stub))
      let error = try await #require(throws: URLError.self) {
        _ = try await session.data(from: URL(string: "https://api.example.com/v1/dogs")!)
      }
      #expect(error.code == .notConnectedToInternet)
    }

    @Test func drivesURLSessionTransportWithTheSameStubs() async throws {
      let stub = StubTransport()
      await stub.on(.get, "/v1/dogs", .json([Dog(name: "Rex")]))
      await stub.on(.get, "/v1/broken", .status(500, body: Data("down".utf8)))
      let transport = URLSessionTransport(configuration: StubURLProtocol.configuration(for: stub))
      let client = APIClient(baseURL: base, transport: transport)
      #expect(try await client.send(Endpoint<[Dog]>(path: "dogs")) == [Dog(name: "Rex")])
      let error = await #expect(throws: APIError.self) {
        try await client.send(Endpoint<Void>(path: "broken"))
      }
      guard case .unacceptableStatus(let response) = error else {
        Issue.record("expected unacceptableStatus, got \(String(describing: error))")
        return
      }
      #expect(response.status == 500)
      #expect(response.body == Data("down".utf8))
    }

    @Test func parallelSessionsNeverReachEachOthersStubs() async throws {
      try await withThrowingTaskGroup(of: (Int, String).self) { group in
        for index in 0..<20 {
          group.addTask {
            let stub = StubTransport { _ in .status(200, body: Data("stub \(index)".utf8)) }
            let session = URLSession(configuration: StubURLProtocol.configuration(for: stub))
            let (data, _) = try await session.data(
              from: URL(string: "https://api.example.com/which")!)
            return (index, String(decoding: data, as: UTF8.self))
          }
        }
        for try await (index, answer) in group {
          #expect(answer == "stub \(index)")
        }
      }
    }

    @Test func aStreamedAnswerArrivesChunkByChunkAndCanFailMidBody() async throws {
      let stub = StubTransport()
      let chunks = ["one", "two", "three"].map { Data($0.utf8) }
      // A type URLSession does not sniff: without one (or with `text/plain`), URLSession on
      // Apple platforms may hold the first 512 bytes to guess the type, and the three chunks
      // would arrive as one.
      await stub.on(
        .get, "/v1/feed",
        .chunks(chunks, interval: .milliseconds(5), headers: ["Content-Type": "application/json"]))
      await stub.on(
        .get, "/v1/cut", .chunks([Data("a".utf8)], failingWith: URLError(.networkConnectionLost)))
      let transport = URLSessionTransport(configuration: StubURLProtocol.configuration(for: stub))
      let client = APIClient(baseURL: base, transport: transport)
      var received: [Data] = []
      for try await chunk in try await client.stream(Endpoint<Data>(path: "feed", decoding: .data))
      {
        received.append(chunk)
      }
      #expect(received == chunks)
      let error = await #expect(throws: APIError.self) {
        for try await _ in try await client.stream(Endpoint<Data>(path: "cut", decoding: .data)) {}
      }
      #expect(error?.urlError?.code == .networkConnectionLost)
    }

    @Test func theBaseConfigurationIsCopiedNotChanged() async throws {
      let base = URLSessionConfiguration.ephemeral
      base.httpAdditionalHeaders = ["X-App": "1"]
      let before = base.protocolClasses?.map { "\($0)" }
      let configured = StubURLProtocol.configuration(for: StubTransport(), base: base)
      #expect(base.protocolClasses?.map { "\($0)" } == before)
      #expect(configured !== base)
      #expect(configured.httpAdditionalHeaders?["X-App"] as? String == "1")
      #expect(configured.protocolClasses?.count == 1)
    }
  }
#endif
