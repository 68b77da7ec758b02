// The shapes of the Security declarations Errand uses, as Apple's SDK declares them, and the
// members of Foundation's URL loading types that need Security (which FoundationNetworking marks
// unavailable), so that Linux can type-check Errand's `#if canImport(Security)` code. Not
// Security: nothing here runs.
import Foundation
import FoundationNetworking

public typealias OSStatus = Int32
public let errSecSuccess: OSStatus = 0
public typealias CFTypeRef = AnyObject
public typealias CFData = NSData
public typealias CFArray = NSArray
public typealias CFDictionary = NSDictionary
public typealias CFString = NSString
public final class CFAllocator {}
public final class CFError {}

public final class SecTrust {}
public final class SecCertificate {}
public final class SecIdentity {}

public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData)
  -> SecCertificate?
{ nil }
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData { NSData() }
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray)
  -> OSStatus
{ 0 }
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool)
  -> OSStatus
{ 0 }
public func SecTrustEvaluateWithError(
  _ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?
) -> Bool { false }
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { nil }
public func SecPKCS12Import(
  _ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>
) -> OSStatus { 0 }
public func SecItemCopyMatching(
  _ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?
) -> OSStatus { 0 }

public let kSecImportExportPassphrase: CFString = "passphrase"
public let kSecImportItemIdentity: CFString = "identity"
public let kSecImportItemCertChain: CFString = "chain"
public let kSecClass: CFString = "class"
public let kSecClassIdentity: CFString = "idnt"
public let kSecAttrLabel: CFString = "labl"
public let kSecReturnRef: CFString = "r_Ref"
public let kSecMatchLimit: CFString = "m_Limit"
public let kSecMatchLimitOne: CFString = "m_LimitOne"

extension URLProtectionSpace {
  public var serverTrust: SecTrust? { nil }
}

extension URLCredential {
  public convenience init(trust: SecTrust) {
    self.init(user: "", password: "", persistence: .none)
  }

  public convenience init(
    identity: SecIdentity, certificates certArray: [Any]?, persistence: URLCredential.Persistence
  ) {
    self.init(user: "", password: "", persistence: persistence)
  }
}
