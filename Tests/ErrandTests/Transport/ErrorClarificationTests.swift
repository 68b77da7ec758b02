import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The same fault gets the same `URLError` code whatever URLSession reports it as: CFNetwork's
/// codes on Apple platforms map to the ones FoundationNetworking and CurlTransport use.
@Suite(.timeLimit(.minutes(3))) struct ErrorClarificationTests {
  @Test(arguments: [
    (URLError.Code.cannotParseResponse, URLError.Code.badServerResponse),
    (.cannotDecodeRawData, .cannotDecodeContentData),
    (.timedOut, .timedOut),
  ])
  func codesFromEitherPlatformMeanOneThing(reported: URLError.Code, clarified: URLError.Code) {
    let original = URLError(reported)
    let error = URLSessionTransport.clarify(original) as? URLError
    #expect(error?.code == clarified)
    if reported != clarified {
      #expect((error?.userInfo[NSUnderlyingErrorKey] as? URLError)?.code == reported)
    }
    #expect(
      APIError.transport(error ?? original).localizedDescription.contains(
        URLError(clarified).phrase))
  }
}
