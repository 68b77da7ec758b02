// The shapes of the os declarations Errand uses, as Apple's SDK declares them, so that Linux can
// type-check Errand's `#if canImport(os)` code. Not os: nothing here runs.
public struct OSLogPrivacy: Sendable {
  public struct Mask: Sendable {
    public static let hash = Mask()
    public static let none = Mask()
  }
  public static let `public` = OSLogPrivacy()
  public static let `private` = OSLogPrivacy()
  public static func `private`(mask: Mask) -> OSLogPrivacy { OSLogPrivacy() }
}

public struct OSLogInterpolation: StringInterpolationProtocol {
  public init(literalCapacity: Int, interpolationCount: Int) {}
  public mutating func appendLiteral(_ literal: String) {}
  public mutating func appendInterpolation(
    _ argumentString: @autoclosure @escaping () -> String, privacy: OSLogPrivacy = .private
  ) {}
}

public struct OSLogMessage: ExpressibleByStringInterpolation, ExpressibleByStringLiteral {
  public init(stringInterpolation: OSLogInterpolation) {}
  public init(stringLiteral value: String) {}
}

public struct Logger: @unchecked Sendable {
  public init(subsystem: String, category: String) {}
  public func error(_ message: OSLogMessage) {}
  public func info(_ message: OSLogMessage) {}
  public func debug(_ message: OSLogMessage) {}
}
