// swift-tools-version:6.1
// 6.1: the tests use Swift Testing's `.stubbed`-style traits and `let error = #expect(throws:)`,
// which Swift 6.0 toolchains (Xcode 16.0–16.2) cannot build; SwiftPM says so plainly instead.
import PackageDescription

let package = Package(
  name: "Errand",
  platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
  products: [
    .library(name: "Errand", targets: ["Errand"]),
    // Stubs, cassettes, contracts, clocks and fixtures, for apps and tools: links no test framework.
    .library(name: "ErrandStubs", targets: ["ErrandStubs"]),
    // What test targets import: ErrandStubs, plus reporting to Swift Testing.
    .library(name: "ErrandTesting", targets: ["ErrandTesting"]),
    // A scripted HTTP/1.1 server on 127.0.0.1, for code that owns its own URLSession.
    .library(name: "LoopbackServer", targets: ["LoopbackServer"]),
    // Linux: a transport on libcurl's multi interface (libcurl loaded at run time, no -dev package).
    // On Apple platforms the module is empty and its C shim is not built or linked.
    .library(name: "ErrandCurl", targets: ["ErrandCurl"]),
  ],
  targets: [
    .target(name: "Errand"),
    .target(name: "ErrandStubs", dependencies: ["Errand"]),
    .target(name: "ErrandTesting", dependencies: ["ErrandStubs"]),
    // Serves a StubTransport or a cassette over its socket too, for another process (a UI test's
    // app): hence ErrandStubs, for the unmatched-request report and the launch environment's key.
    .target(name: "LoopbackServer", dependencies: ["Errand", "ErrandStubs"]),
    // The few libcurl functions ErrandCurl calls, declared and loaded with dlopen by a C shim.
    .target(name: "CErrandCurl"),
    .target(
      name: "ErrandCurl",
      dependencies: ["Errand", .target(name: "CErrandCurl", condition: .when(platforms: [.linux]))]
    ),
    // The example a newcomer runs first: `swift run dogpatch`.
    .target(
      name: "DogPatch", dependencies: ["Errand", "ErrandStubs"],
      path: "Examples/DogPatch/Sources/DogPatch"),
    .executableTarget(
      name: "dogpatch", dependencies: ["DogPatch", "ErrandStubs"],
      path: "Examples/DogPatch/Sources/dogpatch"),
    // Test support, not a product: the other process of the stub-server tests, an app in
    // miniature that finds the server in its environment and calls it through APIClient.
    .executableTarget(
      name: "StubServerChild", dependencies: ["Errand", "ErrandCurl", "ErrandStubs"],
      path: "Tests/StubServerChild"),
    // Test support, not a product: the dog, URLs and clients that every test target shares.
    .target(name: "TestSupport", dependencies: ["Errand", "ErrandTesting"], path: "Tests/Support"),
    .testTarget(name: "ErrandTests", dependencies: ["Errand", "ErrandTesting", "TestSupport"]),
    .testTarget(name: "DogPatchTests", dependencies: ["DogPatch", "Errand", "ErrandTesting"]),
    .testTarget(
      name: "ErrandTestingTests", dependencies: ["Errand", "ErrandTesting", "TestSupport"]),
    .testTarget(
      name: "IntegrationTests",
      dependencies: ["Errand", "ErrandCurl", "ErrandTesting", "LoopbackServer", "TestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)

// Upcoming language features every target builds with, so that code written today keeps its
// meaning in later language modes.
for target in package.targets where target.name != "CErrandCurl" {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .enableUpcomingFeature("ExistentialAny"),
      .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
