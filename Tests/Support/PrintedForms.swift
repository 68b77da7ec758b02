import Errand
import Foundation

/// The text of every event: what a listener that logs events would write (its endpoint, its kind
/// and a `dump` of it), for probes that no printed form shows a secret.
package func printedForms(of events: [CallEvent]) -> [String] {
  events.map { event in
    var dumped = ""
    dump(event, to: &dumped)
    return "\(event.endpoint) \(event.kind) \(dumped)"
  }
}

/// Every printed form of `value`: what a log line, a debugger or a test failure shows (its
/// description, its debug description and a `dump`), and an error's localized description.
package func printedForms(of value: Any) -> [String] {
  var dumped = ""
  dump(value, to: &dumped)
  var forms = ["\(value)", String(reflecting: value), dumped]
  if let error = value as? any Error { forms.append(error.localizedDescription) }
  return forms
}

/// Where the secret sits in a redirect Errand refuses (to an `ftp:` location): in the query of
/// the URL that answered (a name the client's redaction hides), or in the `Location` itself.
package struct RefusedRedirectRow: Sendable, CustomStringConvertible {
  package var name: String
  package var query: [URLQueryItem]
  package var location: String
  package var description: String { name }

  package init(name: String, query: [URLQueryItem], location: String) {
    self.name = name
    self.query = query
    self.location = location
  }
}
