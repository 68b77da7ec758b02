import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// A challenge's sender, which URLSession's delegate API never calls: for tests that hand a
/// session delegate a challenge of their own.
package final class IgnoredChallengeSender: NSObject, URLAuthenticationChallengeSender {
  package override init() {}
  package func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
  package func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
  package func cancel(_ challenge: URLAuthenticationChallenge) {}
  package func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
  package func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
