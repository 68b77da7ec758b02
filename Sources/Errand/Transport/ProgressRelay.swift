import Foundation

/// Tells one exchange's upload progress observer how much of the body has been sent, off the
/// session delegate's queue: in order, none dropped, on a serial queue of the exchange's own.
/// What ends the caller's wait goes through the same queue (``afterReports(_:)``), so the caller
/// has heard every report made before its answer.
///
/// On Linux URLSession waits while its delegate has a backlog (`DelegateQueue`), and every
/// session of the process waits with it: an observer that took its time on the delegate's queue
/// would pace every transfer of the process. Here it delays only its own call's answer. The
/// reports it has not heard yet wait here, a small block each (one for each piece of the body
/// libcurl reads to send), until the observer has heard them.
final class ProgressRelay: Sendable {
  private let call: Exchange
  private let queue = DispatchQueue(label: "errand.url-session.upload-progress")

  init(_ call: Exchange) {
    self.call = call
  }

  /// Tell the observer, after every report made before.
  func report(_ progress: TransferProgress) {
    queue.async { [call] in
      call.reportUploadProgress(progress)
    }
  }

  /// Run `work` once the observer has heard every report made so far.
  func afterReports(_ work: @escaping @Sendable () -> Void) {
    queue.async(execute: work)
  }
}
