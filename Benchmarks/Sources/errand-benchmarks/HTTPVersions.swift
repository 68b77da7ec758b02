#if os(Linux)
  import Errand
  import ErrandCurl
  import Foundation

  /// CurlTransport over TLS speaking HTTP/1.1 only, against the same transport negotiating
  /// HTTP/2 (ALPN) and multiplexing concurrent calls on one connection: the same GET, interleaved
  /// round by round, every answer checked (`--http-versions URL --ca FILE`).
  enum HTTPVersions {
    struct Variant: Sendable {
      var name: String
      var transport: CurlTransport
    }

    /// Why a variant's call did not count.
    struct Failure: Error, CustomStringConvertible {
      var description: String
    }

    static func run(
      url: URL, caFile: String, cLoop: String?, concurrencies: [Int], rounds: Int, seconds: Double
    ) async throws -> String {
      let trust = TrustPolicy(
        certificateAuthorities: .adding([.file(URL(fileURLWithPath: caFile))]))
      let variants = [
        Variant(
          name: "HTTP/1.1",
          transport: try CurlTransport(
            connection: ConnectionOptions(httpVersion: .http1), trust: trust)),
        Variant(
          name: "HTTP/2",
          transport: try CurlTransport(
            connection: ConnectionOptions(httpVersion: .http2), trust: trust)),
      ]
      // What each variant really spoke, from the answer's metrics.
      var spoken: [String] = []
      for variant in variants {
        let response = try await variant.transport.send(HTTPRequest(url: url))
        guard response.status == 200 else {
          throw Failure(description: "\(variant.name): status \(response.status)")
        }
        spoken.append(response.metrics?.protocolName ?? "unknown")
      }
      var contenders = variants.map { variant in
        Contender(name: variant.name) {
          let response = try await variant.transport.send(HTTPRequest(url: url))
          guard response.status == 200, !response.body.isEmpty else {
            throw Failure(description: "status \(response.status)")
          }
        }
      }
      // The same two over libcurl alone, driven by the C loop: what the HTTP version costs
      // libcurl and the server, without Errand. CURL_HTTP_VERSION_1_1 is 2, _2TLS is 4.
      if let cLoop {
        for (name, version) in [("C loop, HTTP/1.1", "2"), ("C loop, HTTP/2", "4")] {
          contenders.append(
            Contender(name: name, fetch: {}) { concurrency, seconds in
              await Throughput.runCLoop(
                cLoop, url: url, concurrency: concurrency, seconds: seconds,
                extra: ["16", version, caFile])
            })
        }
      }
      for contender in contenders {
        _ = await Throughput.measure(contender, concurrency: 4, seconds: 0.5)  // warm up
      }
      var rows: [String] = []
      for concurrency in concurrencies {
        var samples = Array(repeating: Samples(), count: contenders.count)
        for round in 0..<rounds {
          // Interleaved, the first to go rotating, so that drift touches both alike.
          for offset in 0..<contenders.count {
            let index = (offset + round) % contenders.count
            let (rate, cpu) = await Throughput.measure(
              contenders[index], concurrency: concurrency, seconds: seconds)
            samples[index].rates.append(rate)
            samples[index].cpu.append(cpu)
          }
        }
        for (first, label) in stride(from: 0, to: contenders.count, by: 2).map({
          ($0, $0 == 0 ? "CurlTransport" : "C loop")
        }) {
          let (http1, http2) = (samples[first], samples[first + 1])
          let ratios = zip(http2.rates, http1.rates).map { $0 / max($1, 1) }
          let cpuRatios = zip(http2.cpu, http1.cpu).map { $0 / max($1, 1) }
          rows.append(
            "| \(concurrency) | \(label) | \(spread(http1.rates)) | \(spread(http2.rates)) | "
              + "\(spread(ratios, decimals: 2)) | \(spread(cpuRatios, decimals: 2)) | "
              + "\(format(median(http1.cpu))) · \(format(median(http2.cpu))) |")
        }
        FileHandle.standardError.write(Data("concurrency \(concurrency) done\n".utf8))
      }
      return """
        Spoken, from the answers' metrics: \(zip(variants, spoken).map { "\($0.name) → \($1)" }.joined(separator: ", ")).

        | Concurrency | Client | HTTP/1.1 requests/s | HTTP/2 requests/s | HTTP/2 / HTTP/1.1 | CPU per request, HTTP/2 / HTTP/1.1 | CPU µs/request: 1.1 · 2 |
        | ---: | --- | ---: | ---: | ---: | ---: | ---: |
        \(rows.joined(separator: "\n"))
        """
    }

    /// The median of `values`, then their range.
    static func spread(_ values: [Double], decimals: Int = 0) -> String {
      "\(format(median(values), decimals: decimals)) (\(format(values.min() ?? 0, decimals: decimals))–\(format(values.max() ?? 0, decimals: decimals)))"
    }
  }
#endif
