import Foundation

// What `dump(_:)`, debuggers and `String(reflecting:)` show of the public values that hold an
// app's secrets before any request is made: without a mirror of their own, they print every
// stored property, header values and query items included.

extension HTTPHeaders.Field: CustomReflectable {
  /// The name, and the value as ``description`` shows it (a secret's hidden, a URL's secrets
  /// hidden).
  public var customMirror: Mirror {
    Mirror(self, children: ["name": name, "value": shownValue], displayStyle: .struct)
  }
}

extension HTTPHeaders: CustomReflectable {
  /// The fields, with the values ``Redaction/default`` hides read `<redacted>`.
  public var customMirror: Mirror {
    Mirror(self, children: ["fields": Redaction.default.redact(self).fields], displayStyle: .struct)
  }
}

extension Endpoint: CustomReflectable {
  /// Every field, with the secrets ``Redaction/default`` names hidden: header values, query
  /// values, and an absolute URL's user info and secret query values. The body is not shown.
  public var customMirror: Mirror {
    let redaction = Redaction.default
    let query = query.map { item in
      redaction.queryParameters.contains(item.name.lowercased())
        ? "\(item.name)=\(HTTPHeaders.redactedValue)"
        : item.value.map { "\(item.name)=\($0)" } ?? item.name
    }
    return Mirror(
      self,
      children: [
        "method": method.rawValue, "path": path, "url": url.map(redaction.redact) as Any,
        "query": query, "headers": redaction.redact(headers), "hasBody": body != nil,
        "requiresAuthentication": requiresAuthentication, "timeout": timeout as Any,
        "acceptableStatusCodes": acceptableStatusCodes as Any,
        "isIdempotent": isIdempotent as Any, "middleware": middleware,
        "sample": sample as Any, "maximumResponseSize": maximumResponseSize as Any,
        "cachePolicy": cachePolicy as Any, "tags": tags, "priority": priority,
        "sharesInFlight": sharesInFlight,
      ], displayStyle: .struct)
  }
}

extension APIClient.Configuration: CustomReflectable {
  /// Every setting, with the default headers' secrets hidden by the configuration's own
  /// ``redaction``.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "headers": redaction.redact(headers), "timeout": timeout as Any,
        "acceptableStatusCodes": acceptableStatusCodes, "userAgent": userAgent as Any,
        "middleware": middleware, "clock": clock,
        "maximumResponseSize": maximumResponseSize as Any, "callLimits": callLimits as Any,
        "sharesInFlightRequests": sharesInFlightRequests, "connectivity": connectivity as Any,
        "maximumLineLength": maximumLineLength, "maximumEventSize": maximumEventSize as Any,
        "redaction": redaction, "trustedHosts": trustedHosts,
        "crossOriginHeaders": crossOriginHeaders, "eventListeners": eventListeners,
        "cookieJar": cookieJar as Any,
      ], displayStyle: .struct)
  }
}

extension RequestContext: CustomReflectable {
  /// Every field, as declared, the sample shown as the response it is.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "endpoint": endpoint, "requiresAuthentication": requiresAuthentication,
        "sample": sample as Any, "isIdempotent": isIdempotent, "deadline": deadline as Any,
        "clock": clock as Any, "cachePolicy": cachePolicy as Any, "events": events as Any,
        "clientHeaders": clientHeaders, "cancellation": cancellation as Any,
      ], displayStyle: .struct)
  }
}

extension Exchange: CustomReflectable {
  /// Every field, as declared, the sample shown as the response it is and the app's own
  /// `Cookie` value hidden.
  public var customMirror: Mirror {
    Mirror(
      self,
      children: [
        "streams": streams, "sample": sample as Any, "deadline": deadline as Any,
        "progress": progress as Any, "events": events as Any, "withholding": withholding as Any,
        "priority": priority, "shares": shares, "cancellation": cancellation as Any,
        "callers": callers as Any, "cookieJar": cookieJar as Any,
        "appCookieField": appCookieField.map { _ in HTTPHeaders.redactedValue } as Any,
        "preparedForTransport": preparedForTransport,
      ], displayStyle: .struct)
  }
}
