// The shapes of the Network declarations Errand uses, as Apple's SDK declares them, so that Linux
// can type-check Errand's `#if canImport(Network)` code. Not Network: nothing here runs.
// `NWPathMonitor` is left without `Sendable`, as an older SDK declares it, and its handler is
// `@Sendable`, as a newer one does, so that the code is checked against the stricter of each.
import Dispatch

public struct NWInterface {
  public enum InterfaceType: Equatable {
    case other, wifi, cellular, wiredEthernet, loopback
  }
}

public struct NWPath {
  public enum Status: Equatable {
    case satisfied, unsatisfied, requiresConnection
  }
  public var status: Status { .unsatisfied }
}

public final class NWPathMonitor {
  public init() {}
  public init(requiredInterfaceType: NWInterface.InterfaceType) {}
  public var pathUpdateHandler: (@Sendable (_ newPath: NWPath) -> Void)?
  public var currentPath: NWPath { NWPath() }
  public func start(queue: DispatchQueue) {}
  public func cancel() {}
}
