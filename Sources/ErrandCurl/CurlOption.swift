#if os(Linux)
  /// libcurl's option, information and result numbers that CurlTransport uses, from
  /// `<curl/curl.h>` (stable across libcurl 7.x and 8.x).
  enum CurlOption {
    static let writeData: Int32 = 10_001
    static let url: Int32 = 10_002
    static let readData: Int32 = 10_009
    static let errorBuffer: Int32 = 10_010
    static let writeFunction: Int32 = 20_011
    static let httpHeader: Int32 = 10_023
    static let headerData: Int32 = 10_029
    static let customRequest: Int32 = 10_036
    static let lowSpeedLimit: Int32 = 19
    static let lowSpeedTime: Int32 = 20
    static let noProgress: Int32 = 43
    static let transferInfoData: Int32 = 10_057
    static let transferInfoFunction: Int32 = 20_219
    static let caInfo: Int32 = 10_065
    static let caPath: Int32 = 10_097
    static let noBody: Int32 = 44
    static let upload: Int32 = 46
    static let followLocation: Int32 = 52
    static let headerFunction: Int32 = 20_079
    static let httpGet: Int32 = 80
    static let bufferSize: Int32 = 98
    static let noSignal: Int32 = 99
    static let acceptEncoding: Int32 = 10_102
    static let connectTimeoutMilliseconds: Int32 = 156
    static let `private`: Int32 = 10_103
    static let inFileSizeLarge: Int32 = 30_115
    static let postFieldSizeLarge: Int32 = 30_120
    static let copyPostFields: Int32 = 10_165
    static let protocolsString: Int32 = 10_318
    /// The bitmask form of ``protocolsString``, for libcurl before 7.85.
    static let protocols: Int32 = 181
    static let proxy: Int32 = 10_004
    static let proxyUsername: Int32 = 10_175
    static let proxyPassword: Int32 = 10_176
    static let noProxy: Int32 = 10_177
    static let unixSocketPath: Int32 = 10_231
    static let resolve: Int32 = 10_203
    static let httpVersion: Int32 = 84
    static let pinnedPublicKey: Int32 = 10_230
    static let caInfoBlob: Int32 = 40_309
    static let sslCertBlob: Int32 = 40_291
    static let sslCertType: Int32 = 10_086
    static let sslKeyBlob: Int32 = 40_292
    static let sslKeyType: Int32 = 10_088
    static let keyPassword: Int32 = 10_026
    static let pipeWait: Int32 = 237

    /// `CURLOPT_…` names, for the error that says which option libcurl refused.
    static let names: [Int32: String] = [
      writeData: "CURLOPT_WRITEDATA", url: "CURLOPT_URL", readData: "CURLOPT_READDATA",
      errorBuffer: "CURLOPT_ERRORBUFFER", writeFunction: "CURLOPT_WRITEFUNCTION",
      httpHeader: "CURLOPT_HTTPHEADER", headerData: "CURLOPT_HEADERDATA",
      customRequest: "CURLOPT_CUSTOMREQUEST", lowSpeedLimit: "CURLOPT_LOW_SPEED_LIMIT",
      lowSpeedTime: "CURLOPT_LOW_SPEED_TIME", noProgress: "CURLOPT_NOPROGRESS",
      transferInfoData: "CURLOPT_XFERINFODATA", transferInfoFunction: "CURLOPT_XFERINFOFUNCTION",
      caInfo: "CURLOPT_CAINFO", caPath: "CURLOPT_CAPATH", noBody: "CURLOPT_NOBODY",
      upload: "CURLOPT_UPLOAD", followLocation: "CURLOPT_FOLLOWLOCATION",
      headerFunction: "CURLOPT_HEADERFUNCTION", httpGet: "CURLOPT_HTTPGET",
      bufferSize: "CURLOPT_BUFFERSIZE", noSignal: "CURLOPT_NOSIGNAL",
      acceptEncoding: "CURLOPT_ACCEPT_ENCODING",
      connectTimeoutMilliseconds: "CURLOPT_CONNECTTIMEOUT_MS", `private`: "CURLOPT_PRIVATE",
      inFileSizeLarge: "CURLOPT_INFILESIZE_LARGE",
      postFieldSizeLarge: "CURLOPT_POSTFIELDSIZE_LARGE", copyPostFields: "CURLOPT_COPYPOSTFIELDS",
      protocolsString: "CURLOPT_PROTOCOLS_STR", protocols: "CURLOPT_PROTOCOLS",
      proxy: "CURLOPT_PROXY", proxyUsername: "CURLOPT_PROXYUSERNAME",
      proxyPassword: "CURLOPT_PROXYPASSWORD", noProxy: "CURLOPT_NOPROXY",
      unixSocketPath: "CURLOPT_UNIX_SOCKET_PATH", resolve: "CURLOPT_RESOLVE",
      httpVersion: "CURLOPT_HTTP_VERSION", pinnedPublicKey: "CURLOPT_PINNEDPUBLICKEY",
      caInfoBlob: "CURLOPT_CAINFO_BLOB", sslCertBlob: "CURLOPT_SSLCERT_BLOB",
      sslCertType: "CURLOPT_SSLCERTTYPE", sslKeyBlob: "CURLOPT_SSLKEY_BLOB",
      sslKeyType: "CURLOPT_SSLKEYTYPE", keyPassword: "CURLOPT_KEYPASSWD",
      pipeWait: "CURLOPT_PIPEWAIT",
    ]
  }

  /// `CURLINFO_CAINFO` (libcurl 7.84 and later): the CA bundle libcurl uses by default.
  let curlInfoDefaultCAInfo: Int32 = 0x10_0000 + 61
  /// `CURLE_SSL_PINNEDPUBKEYNOTMATCH`.
  let curlPinnedKeyMismatch: Int32 = 90

  /// `CURLE_UNKNOWN_OPTION`: the libcurl loaded does not know the option.
  let curlUnknownOption: Int32 = 48
  /// `CURLPROTO_HTTP | CURLPROTO_HTTPS`.
  let curlProtocolsHTTP = 0b11

  enum CurlMultiOption {
    static let maxConnects: Int32 = 6
    static let maxHostConnections: Int32 = 7
  }

  /// Returned from a write callback to pause the transfer until `curl_easy_pause` resumes it.
  let curlWriteFunctionPause = 0x1000_0001
  /// `curl_easy_pause` bitmask: receive and send again.
  let curlPauseContinue: Int32 = 0
  /// The size libcurl writes into an error buffer.
  let curlErrorSize = 256
#endif
