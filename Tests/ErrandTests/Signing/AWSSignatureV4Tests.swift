import ErrandTesting
import Foundation
import TestSupport
import Testing

@testable import Errand

/// `AWSSignatureV4` against the signature test suite AWS publishes with its C SDK
/// (`tests/aws-signing-test-suite/v4` of https://github.com/awslabs/aws-c-auth at 495329c,
/// Apache 2.0; kept in `Fixtures/aws-sigv4`): each case's request, signed in its context, must
/// give the suite's canonical request, string to sign and signature, byte for byte.
///
/// The suite writes paths before any encoding (`/example space/`, `/ሴ`); a `URL` holds them
/// encoded once, so the cases sign with `encodesPathTwice: false`, which encodes the decoded path
/// once, as the suite does. Encoding twice, as services other than S3 want, is checked on its own
/// against AWS's documented example.
@Suite(.timeLimit(.minutes(3))) struct AWSSignatureV4Tests {
  struct Context: Decodable {
    struct Credentials: Decodable {
      var accessKeyId: String
      var secretAccessKey: String
      var token: String?
    }
    var credentials: Credentials
    var normalize: Bool
    var region: String
    var service: String
    var signBody: Bool
    var timestamp: String
    var omitSessionToken: Bool?
  }

  static func caseNames() throws -> [String] {
    let folder = try Fixtures.nearest().url("aws-sigv4")
    return try FileManager.default.contentsOfDirectory(atPath: folder.path)
      .filter { !$0.hasSuffix(".md") }.sorted()
  }

  @Test func theSuiteHasItsCases() throws {
    #expect(try Self.caseNames().count == 38)
  }

  @Test(arguments: try caseNames())
  func signsAsAWSDoes(_ name: String) throws {
    let fixtures = try Fixtures.nearest()
    let text = { (file: String) throws -> String in
      String(decoding: try fixtures.data("aws-sigv4/\(name)/\(file)"), as: UTF8.self)
    }
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    let context = try decoder.decode(
      Context.self, from: try fixtures.data("aws-sigv4/\(name)/context.json"))
    let signer = AWSSignatureV4(
      credentials: .init(
        accessKeyID: context.credentials.accessKeyId,
        secretAccessKey: context.credentials.secretAccessKey,
        sessionToken: context.credentials.token),
      region: context.region, service: context.service,
      payload: context.signBody ? .hashedWithHeader : .hashed, normalizesPath: context.normalize,
      encodesPathTwice: false, signsSessionToken: !(context.omitSessionToken ?? false))
    let request = try Self.request(from: try text("request.txt"))
    let date = try #require(ISO8601DateFormatter().date(from: context.timestamp))
    let signed = try signer.signed(request, at: date)
    let expected = (
      canonical: try text("header-canonical-request.txt"),
      stringToSign: try text("header-string-to-sign.txt"),
      signature: try text("header-signature.txt")
    )
    #expect(signed.canonicalRequest == expected.canonical)
    #expect(signed.stringToSign == expected.stringToSign)
    #expect(signed.signature == expected.signature)
    #expect(
      signed.request.headers["Authorization"]?.hasSuffix("Signature=\(signed.signature)") == true)
  }

  /// AWS's documented example of a path encoded twice: `/documents and settings/` signs as
  /// `/documents%2520and%2520settings/`; S3 signs it encoded once.
  @Test func servicesButS3EncodeThePathTwice() throws {
    let url = try #require(URL(string: "https://example.amazonaws.com/documents%20and%20settings/"))
    let credentials = AWSSignatureV4.Credentials(accessKeyID: "AKID", secretAccessKey: "secret")
    let service = AWSSignatureV4(credentials: credentials, region: "us-east-1", service: "iam")
    #expect(service.canonicalPath(of: url) == "/documents%2520and%2520settings/")
    let s3 = AWSSignatureV4.s3(credentials: credentials, region: "us-east-1")
    #expect(s3.canonicalPath(of: url) == "/documents%20and%20settings/")
  }

  /// `UNSIGNED-PAYLOAD` is signed and sent in place of the body's hash; S3 always sends the
  /// header.
  @Test func anUnsignedPayloadSignsNoBody() async throws {
    let credentials = AWSSignatureV4.Credentials(accessKeyID: "AKID", secretAccessKey: "secret")
    var request = HTTPRequest(
      method: .put, url: try #require(URL(string: "https://bucket.s3.amazonaws.com/key")))
    request.body = Data("hello".utf8)
    let unsigned = try await AWSSignatureV4.s3(
      credentials: credentials, region: "us-east-1", payload: .unsigned
    ).sign(request, at: Date(timeIntervalSince1970: 0))
    #expect(unsigned.headers["X-Amz-Content-SHA256"] == "UNSIGNED-PAYLOAD")
    let hashed = try await AWSSignatureV4.s3(credentials: credentials, region: "us-east-1")
      .sign(request, at: Date(timeIntervalSince1970: 0))
    #expect(
      hashed.headers["X-Amz-Content-SHA256"]
        == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
  }

  /// Neither the secret key nor the session token shows in a printed form of the signer, its
  /// credentials or the signed request.
  @Test func noPrintedFormShowsASecret() async throws {
    let secret = "wJalrXUtnFEMI/SECRET"
    let token = "SESSION-TOKEN-SECRET"
    let signer = AWSSignatureV4(
      credentials: .init(accessKeyID: "AKID", secretAccessKey: secret, sessionToken: token),
      region: "us-east-1", service: "sts")
    let signed = try await signer.sign(
      HTTPRequest(url: try #require(URL(string: "https://sts.amazonaws.com/"))),
      at: Date(timeIntervalSince1970: 0))
    #expect(signed.headers["X-Amz-Security-Token"] == token)
    for text in printedForms(of: signer) + printedForms(of: signer.credentials)
      + printedForms(of: signed) + [signed.cURLDescription]
    {
      #expect(!text.contains(secret), "\(text)")
      #expect(!text.contains(token), "\(text)")
    }
  }

  /// A request from the suite's `request.txt`: the request line, then `Name:value` fields (a
  /// line starting with white space continues the one before), a blank line, the body.
  static func request(from text: String) throws -> HTTPRequest {
    let (head, body) = {
      guard let blank = text.range(of: "\n\n") else { return (text, "") }
      return (String(text[..<blank.lowerBound]), String(text[blank.upperBound...]))
    }()
    var lines = head.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let requestLine = lines.removeFirst().split(separator: " ")
    let method = String(requestLine[0])
    let target = requestLine.dropFirst().dropLast().joined(separator: " ")
    var fields: [(String, String)] = []
    for line in lines where !line.isEmpty {
      if line.first == " " || line.first == "\t", !fields.isEmpty {
        fields[fields.count - 1].1 += "\n" + line
      } else if let colon = line.firstIndex(of: ":") {
        fields.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
      }
    }
    let host = try #require(fields.first { $0.0.lowercased() == "host" }?.1)
    var components = URLComponents()
    components.scheme = "https"
    components.host = host
    let (path, query) = {
      guard let mark = target.firstIndex(of: "?") else { return (target, String?.none) }
      return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }()
    components.path = path
    components.percentEncodedQuery = query?.addingPercentEncoding(
      withAllowedCharacters: CharacterSet.urlQueryAllowed.union(CharacterSet(charactersIn: "%")))
    let url = try #require(components.url)
    var request = HTTPRequest(method: HTTPMethod(rawValue: method), url: url)
    for (name, value) in fields where name.lowercased() != "host" {
      request.headers.add(name, value)
    }
    if !body.isEmpty { request.body = Data(body.utf8) }
    return request
  }
}
