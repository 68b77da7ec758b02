import Errand
import ErrandCurl
import Foundation

/// Many requests through CurlTransport at a fixed concurrency, a share of them cancelled at a
/// random moment, printing resident memory and open file descriptors as it goes: neither should
/// grow once the connection pool is warm.
enum Soak {
  static func run(url: URL, requests: Int, concurrency: Int) async {
    #if os(Linux)
      let client = APIClient(
        baseURL: url.deletingLastPathComponent(), transport: CurlTransport())
      let endpoint = Endpoint<[Dog]>(path: url.lastPathComponent)
      let perWorker = requests / concurrency
      let checkpoints = 10
      var outcomes = (done: 0, cancelled: 0, failed: 0)
      print("requests\tRSS MB\tfds\tdone\tcancelled\tfailed")
      for checkpoint in 1...checkpoints {
        let share = perWorker / checkpoints
        let results = await withTaskGroup(of: (Int, Int, Int).self) { group in
          for _ in 0..<concurrency {
            group.addTask {
              var counts = (0, 0, 0)
              for _ in 0..<share {
                let call = Task { try await client.send(endpoint) }
                if Int.random(in: 0..<20) == 0 {
                  // Cancel one call in twenty, before or during its transfer.
                  try? await Task.sleep(for: .microseconds(Int.random(in: 0..<500)))
                  call.cancel()
                }
                switch await call.result {
                case .success: counts.0 += 1
                case .failure(let error as APIError) where error.kind == .cancelled: counts.1 += 1
                case .failure: counts.2 += 1
                }
              }
              return counts
            }
          }
          return await group.reduce((0, 0, 0)) { ($0.0 + $1.0, $0.1 + $1.1, $0.2 + $1.2) }
        }
        outcomes.done += results.0
        outcomes.cancelled += results.1
        outcomes.failed += results.2
        print(
          "\(checkpoint * share * concurrency)\t\(format(residentMegabytes(), decimals: 1))\t"
            + "\(openFileDescriptors())\t\(outcomes.done)\t\(outcomes.cancelled)\t\(outcomes.failed)"
        )
      }
    #else
      print("CurlTransport runs on Linux only")
    #endif
  }

  /// The process's resident memory now (`VmRSS`), in MB.
  static func residentMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
      let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
    else { return 0 }
    return kilobytes / 1024
  }

  /// How many file descriptors the process has open.
  static func openFileDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
  }
}
