import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What ``SessionDelegate`` observes of one task for its ``TransferMetrics``: when it started,
/// when each head arrived, how many body bytes came, and the redirects it followed; overlaid, on
/// Apple platforms, with the `URLSessionTaskMetrics` the session reports.
struct ObservedTransfer {
  /// When the current hop started, on the wall clock and the continuous clock.
  private var start = Date()
  private var began = ContinuousClock.now
  /// When the current hop's head arrived, from its start.
  private var head: Duration?
  /// Body bytes of the current hop that arrived.
  var bodyBytes = 0
  /// The redirects followed, oldest first.
  private(set) var hops: [TransferMetrics] = []
  /// What URLSession reported (Apple platforms), once it has.
  var reported: TransferMetrics?
  /// When the task ended, once it has: its end is then this, however long the end is held
  /// afterwards for URLSession's report.
  private var ended: ContinuousClock.Instant?

  /// The task ended (its last byte has come): the time the metrics end at.
  mutating func taskEnded() {
    ended = ended ?? .now
  }

  /// The head of the current hop arrived.
  mutating func headArrived() {
    head = began.duration(to: .now)
  }

  /// The current hop was a redirect, which URLSession follows: it ends here and the next starts.
  mutating func redirected() {
    var hop = TransferMetrics()
    hop.start = start
    hop.responseStart = began.duration(to: .now)
    hop.responseEnd = hop.responseStart
    hops.append(hop)
    start = Date()
    began = .now
    head = nil
    bodyBytes = 0
  }

  /// The metrics so far: the end when `ended`, and the request body's size when `sent` is known.
  func metrics(ended: Bool, sent: Int64? = nil) -> TransferMetrics {
    var metrics = TransferMetrics()
    metrics.start = start
    metrics.responseStart = head
    metrics.responseEnd = ended ? began.duration(to: self.ended ?? .now) : nil
    metrics.responseBodyBytes = bodyBytes
    metrics.requestBodyBytes = sent.map { Int($0) }
    metrics.redirects = hops
    guard var overlaid = reported.map(metrics.overlaid(by:)) else { return metrics }
    // A session that reports no body (0, as for a task whose metrics missed its data) is not
    // believed over the bytes the delegate counted.
    if overlaid.responseBodyBytes == 0, bodyBytes > 0 {
      overlaid.responseBodyBytes = bodyBytes
    }
    return overlaid
  }
}

extension TransferMetrics {
  /// The metrics `URLSessionTaskMetrics` reports: the last transaction's phases (from its fetch
  /// start), sizes and connection, and each earlier transaction as a redirect. URLSession on Linux
  /// reports none of these, so every field stays `nil` there.
  init(_ task: URLSessionTaskMetrics) {
    let transactions = task.transactionMetrics.filter { $0.resourceFetchType != .localCache }
    self.init()
    guard let last = transactions.last else { return }
    self = TransferMetrics(last)
    redirects = transactions.dropLast().map(TransferMetrics.init)
  }

  /// One request and response of a task.
  init(_ transaction: URLSessionTaskTransactionMetrics) {
    self.init()
    let origin = transaction.fetchStartDate
    func since(_ date: Date?) -> Duration? {
      guard let origin, let date else { return nil }
      return .seconds(date.timeIntervalSince(origin))
    }
    start = origin
    domainLookupStart = since(transaction.domainLookupStartDate)
    domainLookupEnd = since(transaction.domainLookupEndDate)
    connectStart = since(transaction.connectStartDate)
    connectEnd = since(transaction.connectEndDate)
    secureConnectionStart = since(transaction.secureConnectionStartDate)
    secureConnectionEnd = since(transaction.secureConnectionEndDate)
    requestStart = since(transaction.requestStartDate)
    responseStart = since(transaction.responseStartDate)
    responseEnd = since(transaction.responseEndDate)
    protocolName = transaction.networkProtocolName
    remoteAddress = transaction.remoteAddress
    remotePort = Self.port(transaction.remotePort)
    // Counts and the connection flag have no "unknown" value: they mean something only in a
    // transaction that was reported at all.
    guard origin != nil else { return }
    requestHeaderBytes = Int(transaction.countOfRequestHeaderBytesSent)
    requestBodyBytes = Int(transaction.countOfRequestBodyBytesSent)
    responseHeaderBytes = Int(transaction.countOfResponseHeaderBytesReceived)
    // After decoding, as Errand counts everywhere else (the body the caller reads), not the
    // compressed size on the wire (`countOfResponseBodyBytesReceived`).
    responseBodyBytes = Int(transaction.countOfResponseBodyBytesAfterDecoding)
    reusedConnection = transaction.isReusedConnection
  }

  /// The port, as Apple's Foundation reports it.
  private static func port(_ port: Int?) -> Int? { port }

  /// The port, as Foundation on Linux declares it (a string).
  private static func port(_ port: String?) -> Int? { port.flatMap { Int($0) } }
}
