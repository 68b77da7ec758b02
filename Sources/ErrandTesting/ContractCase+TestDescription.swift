import ErrandStubs
import Testing

extension ContractCase: CustomTestStringConvertible {
  /// The case's name, so each argument of a parameterized test reads as its row.
  public var testDescription: String { name }
}
