import Foundation

extension Endpoint {
  /// A copy of this endpoint with more tags (``tags``), by which
  /// ``APIClient/cancelAll(tagged:)`` ends its calls.
  ///
  /// ```swift
  /// let avatar = Endpoint<Data>(path: "users/42/avatar", decoding: .data).tagged("profile", "images")
  /// ```
  /// - Parameter tags: The tags to add.
  /// - Returns: The changed endpoint.
  public func tagged(_ tags: String...) -> Endpoint {
    var copy = self
    copy.tags.formUnion(tags)
    return copy
  }
}
