/// A value held by reference, so that a struct that carries it rarely (an endpoint's sample
/// answer) stays small to copy at every step of a call.
package final class Boxed<Value: Sendable>: Sendable {
  /// The value.
  package let value: Value

  /// Hold `value`.
  /// - Parameter value: The value.
  package init(_ value: Value) {
    self.value = value
  }
}
