#if os(Linux)
  import CErrandCurl
  import Errand
  import Foundation

  extension CurlTransfer {
    /// libcurl's count of request body bytes sent (the observer drops counts it has seen).
    func sent(_ count: Int64, of total: Int64) {
      uploadProgress?(
        TransferProgress(
          completedBytes: Int(count), expectedBytes: total > 0 ? Int(total) : uploadSize))
    }

    /// What libcurl knows of this transfer so far. Loop thread.
    ///
    /// libcurl reports when each phase ended; they follow one another, so each starts where the
    /// one before it ended (name lookup where the transfer left libcurl's queue, from libcurl
    /// 8.6, else at the start). A reused connection had no lookup, connect or handshake.
    func metrics() -> TransferMetrics {
      var metrics = TransferMetrics()
      metrics.start = startedAt
      metrics.reusedConnection = long(CurlInfo.numConnects).map { $0 == 0 }
      if metrics.reusedConnection != true {
        metrics.domainLookupStart = time(CurlInfo.queueTime) ?? .zero
        metrics.domainLookupEnd = time(CurlInfo.nameLookupTime)
        metrics.connectStart = metrics.domainLookupEnd
        metrics.connectEnd = time(CurlInfo.connectTime)
        metrics.secureConnectionEnd = time(CurlInfo.appConnectTime)
        if metrics.secureConnectionEnd != nil {
          metrics.secureConnectionStart = metrics.connectEnd
        }
      }
      metrics.requestStart = time(CurlInfo.preTransferTime)
      metrics.responseStart = time(CurlInfo.startTransferTime)
      metrics.responseEnd = isComplete ? time(CurlInfo.totalTime) : nil
      metrics.requestHeaderBytes = long(CurlInfo.requestSize)
      metrics.requestBodyBytes = offset(CurlInfo.sizeUpload)
      metrics.responseHeaderBytes = long(CurlInfo.headerSize)
      metrics.responseBodyBytes = offset(CurlInfo.sizeDownload)
      metrics.protocolName = long(CurlInfo.httpVersion).flatMap { CurlInfo.versions[$0] }
      metrics.remoteAddress = string(CurlInfo.primaryIP)
      metrics.remotePort = long(CurlInfo.primaryPort).flatMap { $0 > 0 ? $0 : nil }
      return metrics
    }

    /// A phase's end, from libcurl's microseconds since the start; `nil` when it did not happen
    /// (libcurl reports 0).
    private func time(_ info: Int32) -> Duration? {
      offset(info).flatMap { $0 > 0 ? .microseconds($0) : nil }
    }

    private func long(_ info: Int32) -> Int? {
      var value = 0
      return errand_curl_easy_getinfo_long(easy, info, &value) == 0 ? value : nil
    }

    private func offset(_ info: Int32) -> Int? {
      var value: Int64 = 0
      return errand_curl_easy_getinfo_offset(easy, info, &value) == 0 ? Int(value) : nil
    }

    private func string(_ info: Int32) -> String? {
      var value: UnsafePointer<CChar>?
      guard errand_curl_easy_getinfo_string(easy, info, &value) == 0, let value else {
        return nil
      }
      let text = String(cString: value)
      return text.isEmpty ? nil : text
    }
  }

  /// The `CURLINFO_*` numbers read, from `<curl/curl.h>` (string, long and `curl_off_t` bases
  /// plus the item's number).
  enum CurlInfo {
    static let requestSize: Int32 = 0x20_0000 + 12
    static let headerSize: Int32 = 0x20_0000 + 11
    static let numConnects: Int32 = 0x20_0000 + 26
    static let primaryIP: Int32 = 0x10_0000 + 32
    static let primaryPort: Int32 = 0x20_0000 + 40
    static let httpVersion: Int32 = 0x20_0000 + 46
    static let sizeUpload: Int32 = 0x60_0000 + 7
    static let sizeDownload: Int32 = 0x60_0000 + 8
    static let totalTime: Int32 = 0x60_0000 + 50
    static let nameLookupTime: Int32 = 0x60_0000 + 51
    static let connectTime: Int32 = 0x60_0000 + 52
    static let preTransferTime: Int32 = 0x60_0000 + 53
    static let startTransferTime: Int32 = 0x60_0000 + 54
    static let appConnectTime: Int32 = 0x60_0000 + 56
    /// `CURLINFO_QUEUE_TIME_T`, from libcurl 8.6; older ones answer that it is unknown.
    static let queueTime: Int32 = 0x60_0000 + 65
    /// `CURL_HTTP_VERSION_*` as libcurl reports the version spoken, by ALPN name.
    static let versions: [Int: String] = [1: "http/1.0", 2: "http/1.1", 3: "h2", 30: "h3"]
  }
#endif
