/// How a call uses the ``HTTPCache`` of a ``CachingMiddleware``: per middleware, or per endpoint
/// with ``Endpoint/cachePolicy``.
public enum CachePolicy: Sendable, Hashable {
  /// RFC 9111's rules: a fresh stored response answers; a stale one is revalidated with its
  /// validators; anything else goes to the network.
  case useProtocolRules
  /// Go to the network whatever is stored; the answer replaces what was stored.
  case reloadIgnoringCache
  /// A stored response answers however old it is; only a miss goes to the network.
  case returnCacheElseLoad
  /// Never go to the network (offline): a stored response answers however old it is, and a miss
  /// is a `504 Gateway Timeout` response (RFC 9111 §5.2.1.7), which the client reports as
  /// ``APIError/unacceptableStatus(_:)`` unless the endpoint accepts `504`.
  case onlyIfCached
}

/// Where a response came from, when a ``CachingMiddleware`` handled the call
/// (``HTTPResponse/cacheStatus``).
public enum CacheStatus: String, Sendable, Hashable {
  /// A fresh stored response; nothing was sent.
  case hit
  /// Sent to the network: nothing usable was stored (or the policy said reload).
  case miss
  /// A stored response the server confirmed with `304 Not Modified`: its headers were updated.
  case revalidated
  /// A stored response past its freshness: returned without asking the server (the call's
  /// policy allowed it), or in place of a revalidation that failed (a `5xx`, or no answer) within
  /// its `stale-if-error`.
  case stale
}
