// swift-tools-version:6.0
import PackageDescription

// Measures Errand against raw URLSession. Separate from the library so that Errand itself keeps
// no dependencies; run it with ./run.sh.
let package = Package(
  name: "ErrandBenchmarks",
  platforms: [.macOS(.v13)],
  dependencies: [.package(name: "Errand", path: "..")],
  targets: [
    .executableTarget(
      name: "errand-benchmarks",
      dependencies: [
        .product(name: "Errand", package: "Errand"),
        .product(name: "ErrandStubs", package: "Errand"),
        .product(name: "ErrandCurl", package: "Errand"),
      ])
  ],
  swiftLanguageModes: [.v6]
)
