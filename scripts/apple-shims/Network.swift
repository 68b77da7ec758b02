// The shapes of the Network declarations Errand uses, as Apple's SDK declares them, so that Linux
// can type-check Errand's `#if canImport(Network)` code. Not Network: nothing here runs.
// `NWPathMonitor` is left without `Sendable`, as an older SDK declares it, and its handler is
// `@Sendable`, as a newer one does, so that the code is checked against the stricter of each.
// `ProxyConfiguration` and the two URL loading members below come with Network on Apple
// platforms (`proxyConfigurations` is Network's extension of `URLSessionConfiguration`;
// `assumesHTTP3Capable` is Foundation's, declared here for the same file).
import Dispatch
import Foundation
import FoundationNetworking

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

public enum NWEndpoint {
  public struct Host {
    public init(_ string: String) {}
  }
  public struct Port {
    public init?(rawValue: UInt16) {}
  }
  case hostPort(host: Host, port: Port)
}

public enum NWProtocolTLS {
  public final class Options {}
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public struct ProxyConfiguration {
  public init(httpCONNECTProxy: NWEndpoint, tlsOptions: NWProtocolTLS.Options? = nil) {}
  public init(socksv5Proxy: NWEndpoint) {}
  public var allowFailover: Bool = false
  public var excludedDomains: [String] = []
  public var matchDomains: [String] = []
  public mutating func applyCredential(username: String, password: String) {}
}

extension URLSessionConfiguration {
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  public var proxyConfigurations: [ProxyConfiguration] {
    get { [] }
    set {}
  }
}

extension URLRequest {
  public var assumesHTTP3Capable: Bool {
    get { false }
    set {}
  }
}
