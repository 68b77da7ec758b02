import Foundation

extension HTTPBody.Writer {
  /// Write the rest of `upstream` into this writer's body, one chunk at a time, waiting while
  /// its reader is a memory budget behind, then end it as `upstream` ended: normally, with
  /// `upstream`'s metrics, or with its error. Returns early when this body's reader stops.
  /// - Parameters:
  ///   - upstream: The body to copy.
  ///   - observe: Sees each chunk before it is written.
  ///   - beforeEnd: Runs once `upstream` has ended normally, before this body ends.
  func copy(
    _ upstream: HTTPBody, observe: (Data) -> Void = { _ in },
    beforeEnd: () async -> Void = {}
  ) async {
    do {
      for try await chunk in upstream {
        observe(chunk)
        switch write(chunk) {
        case .stop:
          return
        case .pause:
          await withCheckedContinuation { resume in whenDrained { resume.resume() } }
        case .proceed:
          break
        }
      }
      await beforeEnd()
      finish(as: upstream)
    } catch {
      finish(throwing: error)
    }
  }
}
