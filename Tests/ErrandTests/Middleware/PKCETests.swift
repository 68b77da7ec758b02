import Errand
import Foundation
import TestSupport
import Testing

/// PKCE against RFC 7636's own example, and the rules for a verifier.
@Suite(.timeLimit(.minutes(3))) struct PKCETests {
  /// RFC 7636 Appendix B.
  @Test func theRFCsExample() throws {
    let pkce = try PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    #expect(PKCE.method == "S256")
  }

  /// A new verifier is 43 characters of the allowed set, different each time.
  @Test func newVerifiersAreRandomAndWellFormed() throws {
    let verifiers = (0..<100).map { _ in PKCE().verifier }
    #expect(Set(verifiers).count == 100)
    for verifier in verifiers {
      #expect(verifier.count == 43)
      #expect(try PKCE(verifier: verifier).verifier == verifier)
    }
  }

  @Test(arguments: [
    String(repeating: "a", count: 42), String(repeating: "a", count: 129),
    String(repeating: "a", count: 42) + "+", String(repeating: "é", count: 43),
  ])
  func malformedVerifiersAreRefused(_ verifier: String) {
    #expect(throws: InvalidCredentialError.self) { _ = try PKCE(verifier: verifier) }
  }

  @Test func noPrintedFormShowsTheVerifier() {
    let pkce = PKCE()
    for text in printedForms(of: pkce) {
      #expect(!text.contains(pkce.verifier), "\(text)")
    }
  }
}
