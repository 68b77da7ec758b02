import Foundation

/// What ``StubResponse/pinMismatch`` throws inside the stub, which answers with a
/// `PinMismatchError` for the request's host and its ``StubTransport/trust``'s pins.
struct StubPinMismatch: Error {}
