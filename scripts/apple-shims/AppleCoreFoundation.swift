// The shapes of the CoreFoundation run-loop declarations StubURLProtocol uses, as Apple's SDK
// declares them (Foundation brings them along there), so that Linux can type-check its
// `#if !canImport(FoundationNetworking)` code. Not CoreFoundation: nothing here runs.
import Foundation

public final class CFRunLoop {}
public typealias CFTypeRef = AnyObject
public typealias CFArray = NSArray
public typealias CFString = NSString

public struct CFRunLoopMode: RawRepresentable, Hashable {
  public var rawValue: CFString
  public init(rawValue: CFString) { self.rawValue = rawValue }
  public static let commonModes = CFRunLoopMode(rawValue: "kCFRunLoopCommonModes")
}

public func CFRunLoopGetCurrent() -> CFRunLoop! { CFRunLoop() }
public func CFRunLoopCopyCurrentMode(_ rl: CFRunLoop!) -> CFRunLoopMode! { nil }
public func CFRunLoopPerformBlock(_ rl: CFRunLoop!, _ mode: CFTypeRef!, _ block: (() -> Void)!) {}
public func CFRunLoopWakeUp(_ rl: CFRunLoop!) {}
