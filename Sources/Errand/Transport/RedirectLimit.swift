extension RedirectPolicy {
  /// How many redirects one request follows, as URLSession does: `CurlTransport` and stubs that
  /// follow redirects stop after this many, and `URLSessionTransport` sends a request again
  /// itself (a `307` or `308` within its origin) at most this many times.
  package static let maximumRedirects = 16
}
