import Foundation

extension Endpoint {
  /// A copy of this endpoint that sends an `Idempotency-Key` and may therefore be retried, even
  /// with a method that is not idempotent, such as `POST` or `PATCH`.
  ///
  /// ```swift
  /// let pay = Endpoint<Receipt>(method: .post, path: "payments", body: .json(order))
  ///   .withIdempotencyKey()
  /// let receipt = try await client.send(pay)   // a new key for this call, on every attempt
  /// ```
  ///
  /// Each call of the client (``APIClient/send(_:)``, ``APIClient/stream(_:)``, a download, an
  /// upload) gets one key, generated when its request is built, and every attempt of that call
  /// sends it: ``RetryMiddleware``'s retries and ``BearerAuthenticationMiddleware``'s replay after
  /// a token refresh. Sending the same endpoint value again is another call, with another key.
  /// The key sent is in the request: `response.request.headers["Idempotency-Key"]`. Each page
  /// that ``APIClient/pages(_:)`` follows and each connection of a reconnecting event stream is
  /// a call of its own, with a key of its own; a retry made outside Errand (a loop of your own,
  /// Combine's `retry`) is a new call too, so give such an operation a
  /// ``IdempotencyKey/fixed(_:)`` key to send the same one every time.
  ///
  /// - An `Idempotency-Key` in the endpoint's own ``headers`` is sent as written, and the call
  ///   may be retried; one among the client's default headers is replaced by the call's key (a
  ///   key shared by every call would make the server take them all for one).
  /// - ``RetryMiddleware`` retries the call as it retries idempotent ones, unless ``isIdempotent``
  ///   is set to `false`. Use a key only with a server that documents it: a server that ignores
  ///   the field acts on each attempt (draft-ietf-httpapi-idempotency-key-header-06, section
  ///   2.5.1).
  /// - A safe method (`GET`, `HEAD`, `OPTIONS`, `TRACE`) is refused: its call throws
  ///   ``APIError/invalidRequest(_:)`` before anything is sent. It needs no key: repeating it
  ///   changes nothing, so it is retried without one.
  /// - Parameter key: ``IdempotencyKey/generated`` (the default) for a new key every call, or
  ///   ``IdempotencyKey/fixed(_:)`` for a key the app keeps.
  /// - Returns: The changed endpoint.
  public func withIdempotencyKey(_ key: IdempotencyKey = .generated) -> Endpoint {
    var copy = self
    copy.idempotencyKey = key
    return copy
  }

  /// Whether the call may be sent more than once: ``isIdempotent`` when set, else the method's
  /// idempotence or an ``idempotencyKey``.
  @inline(__always)  // As description(redactedBy:) is.
  var retriesSafely: Bool {
    isIdempotent ?? (method.isIdempotent || idempotencyKey != nil)
  }

  /// The `Idempotency-Key` value one call sends: a new value for each call with a
  /// ``IdempotencyKey/generated`` key.
  /// - Parameter invalid: Makes the error for a problem, naming the endpoint.
  /// - Returns: The field value, or `nil` when the endpoint has no key or sets the field itself.
  /// - Throws: ``APIError/invalidRequest(_:)`` for a key on a safe method or a fixed key that
  ///   cannot be sent.
  func idempotencyKeyValue(invalid: (String) -> APIError) throws -> String? {
    guard let idempotencyKey else { return nil }
    if method.isSafe {
      throw invalid(
        "an idempotency key is for unsafe methods such as POST and PATCH; \(method) is safe, "
          + "needs none, and is retried without one.")
    }
    guard headers[IdempotencyKey.fieldName] == nil else { return nil }
    do {
      return try idempotencyKey.fieldValue()
    } catch {
      throw invalid(error.text)
    }
  }
}

extension IdempotencyKey {
  /// The field's name.
  static let fieldName = "Idempotency-Key"
}

extension HTTPMethod {
  /// Whether the method is safe (RFC 9110, section 9.2.1): `GET`, `HEAD`, `OPTIONS` and `TRACE`.
  var isSafe: Bool {
    ["GET", "HEAD", "OPTIONS", "TRACE"].contains(rawValue)
  }
}
