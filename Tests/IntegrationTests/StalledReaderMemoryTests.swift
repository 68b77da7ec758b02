#if os(Linux)
  import Foundation
  import Glibc
  import LoopbackServer
  import TestSupport
  import Testing

  @testable import Errand

  /// A reader that takes the head and the first chunk of a large streamed body and then stops
  /// reading, while the server writes as fast as it can, costs resident memory that does not grow
  /// with the body: through `URLSessionTransport`, whose transfer cannot pause and whose body
  /// goes to a temporary file (on Linux at the pace at which the delegate writes it:
  /// `DelegateQueue`), as through `CurlTransport`, which pauses the transfer.
  ///
  /// The resident size is the process's, so each case measures in a child process of this test
  /// binary (``probe()``) where nothing else runs: beside the whole suite, other tests' bodies
  /// would come and go in the same figure. One case at a time, so that two children do not share
  /// the processor. Skipped under ThreadSanitizer, whose shadow memory grows with every byte the
  /// process touches.
  @Suite(
    .timeLimit(.minutes(3)), .serialized,
    .disabled(
      if: StalledReaderProbe.underThreadSanitizer,
      "ThreadSanitizer's shadow memory is resident memory too"))
  struct StalledReaderMemoryTests {
    /// The body: 512 MB, which the server sends as fast as it can.
    static let bodySize = 512 << 20
    /// The most the process's resident size may grow while the reader stalls. What Errand holds
    /// is at most 11 MiB (the body's memory budget, a 1 MiB write buffer for its file and,
    /// through URLSession on Linux, at most 8 MiB of chunks waiting for the delegate); the rest is
    /// what glibc's allocator keeps of what FoundationNetworking freed: 21–40 MB in all in this
    /// test on 2 cores. Before URLSession was held back, 238–269 MB.
    static let growthBound = 64 << 20

    @Test(arguments: TransportKind.allCases)
    func aStalledReaderOfALargeBodyKeepsResidentMemoryBounded(_ kind: TransportKind) async throws {
      var environment = ProcessInfo.processInfo.environment
      environment[StalledReaderProbe.transportVariable] = kind.rawValue
      let (status, output) = try await ChildTestProcess.run(
        filter: "StalledReaderMemoryTests/probe", environment: environment)
      #expect(status == 0, "the probe in the child process failed:\n\(output)")
      #expect(output.contains("1 test"), "the child ran no probe:\n\(output)")
      for line in output.split(separator: "\n") where line.hasPrefix("stalled reader") {
        print(line)
      }
    }

    /// The measurement, in the child process of the test above; skipped anywhere else.
    @Test(
      .enabled(
        if: StalledReaderProbe.transport != nil, "runs in the child process of the test above"))
    func probe() async throws {
      let kind = try #require(StalledReaderProbe.transport)
      let size = Self.bodySize
      // Zeroes that the server only reads: pages never written are not resident.
      let body = Data(count: size)
      let server = try LoopbackServer { request in
        ScriptedResponse(
          body: request.path == "/warm-up" ? Data(count: 64 << 10) : body, chunkSize: 256 * 1024)
      }
      defer { server.stop() }
      let transport = kind.make()
      // A first body through the same transport, so that what the first transfer sets up once
      // (threads, sessions, libcurl's handles) is in the baseline; and what the allocator kept
      // of it is given back, so that it cannot hide the growth. A small one: glibc keeps up to
      // twice the largest block freed so far free at the top of each arena, which a large body
      // would raise for the measurement.
      let warmUp = try await transport.stream(HTTPRequest(url: server.url("/warm-up")))
      for try await _ in try #require(warmUp.bodyStream) {}
      StalledReaderProbe.trimHeap()
      let baseline = StalledReaderProbe.resident()
      let peakWasReset = StalledReaderProbe.resetPeak()

      let response = try await transport.stream(HTTPRequest(url: server.url("/big")))
      let stream = try #require(response.bodyStream)
      var iterator = stream.makeAsyncIterator()
      var received = try await iterator.next()?.count ?? 0
      // The stall: until the whole body has reached it (URLSession: the rest is in the file), or
      // until it has not grown for a second (CurlTransport paused the transfer, half a budget or
      // more ahead of the reader, which took up to 256 KiB of it).
      var sampledPeak = baseline
      var unread = stream.buffer.unreadBytes
      var quietSince = ContinuousClock.now
      while received + unread < size {
        sampledPeak = max(sampledPeak, StalledReaderProbe.resident())
        try await Task.sleep(for: .milliseconds(5))
        let now = stream.buffer.unreadBytes
        if now != unread {
          unread = now
          quietSince = .now
        } else if ContinuousClock.now - quietSince > .seconds(1) {
          break
        }
      }
      sampledPeak = max(sampledPeak, StalledReaderProbe.resident())
      let peak = peakWasReset ? max(sampledPeak, StalledReaderProbe.peakResident()) : sampledPeak
      let growth = peak - baseline
      StalledReaderProbe.trimHeap()
      let trimmed = StalledReaderProbe.resident() - baseline
      while let chunk = try await iterator.next() {
        received += chunk.count
      }
      print(
        "stalled reader (\(kind), \(size >> 20) MB): resident size grew by \(growth >> 20) MB at "
          + "most (bound \(Self.growthBound >> 20) MB), \(unread >> 20) MB unread when the stall "
          + "ended, \(trimmed >> 20) MB above the baseline after malloc_trim")
      #expect(received == size)
      #expect(growth < Self.growthBound, "grew by \(growth >> 20) MB")
    }
  }

  /// What ``StalledReaderMemoryTests/probe()`` reads of its own process.
  enum StalledReaderProbe {
    static let transportVariable = "ERRAND_STALLED_READER_PROBE_TRANSPORT"
    static let transport = ProcessInfo.processInfo.environment[transportVariable].flatMap {
      TransportKind(rawValue: $0)
    }

    /// Whether this process runs under ThreadSanitizer.
    static let underThreadSanitizer =
      dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__tsan_init") != nil

    /// The process's resident size now (`VmRSS`), in bytes.
    static func resident() -> Int { status("VmRSS") }

    /// The process's peak resident size (`VmHWM`), in bytes.
    static func peakResident() -> Int { status("VmHWM") }

    /// A field of `/proc/self/status` given in kB, in bytes; 0 when missing.
    private static func status(_ field: String) -> Int {
      let text = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
      let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
      let kilobytes = line.flatMap {
        Int($0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      }
      return (kilobytes ?? 0) * 1024
    }

    /// Set the peak resident size to the current one (`/proc/self/clear_refs`, Linux 4.0 and
    /// later).
    /// - Returns: Whether it was set.
    static func resetPeak() -> Bool {
      let descriptor = open("/proc/self/clear_refs", O_WRONLY)
      guard descriptor >= 0 else { return false }
      defer { close(descriptor) }
      return write(descriptor, "5", 1) == 1
    }

    /// Give back to the system what glibc's allocator keeps of freed memory (`malloc_trim(0)`,
    /// looked up at run time: Glibc's module map leaves `malloc.h` out).
    static func trimHeap() {
      typealias Trim = @convention(c) (Int) -> Int32
      if let trim = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
        _ = unsafeBitCast(trim, to: Trim.self)(0)
      }
    }
  }
#endif
