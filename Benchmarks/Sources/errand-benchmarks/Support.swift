import Errand
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The dog that every benchmark body is made of.
struct Dog: Codable, Sendable {
  var id: Int
  var name: String
  var breed: String
  var age: Int
  var price: Double
}

/// The median of some numbers.
func median(_ values: [Double]) -> Double {
  let sorted = values.sorted()
  guard !sorted.isEmpty else { return 0 }
  return sorted.count % 2 == 1
    ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

/// The processor time this process has used, in seconds (user and system, all threads).
func cpuSeconds() -> Double {
  Double(clock()) / Double(CLOCKS_PER_SEC)
}

/// Seconds since some fixed point, for timing.
func now() -> Double {
  Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}

/// A JSON array of `count` dogs.
func dogsJSON(count: Int) throws -> Data {
  try JSONEncoder().encode(
    (0..<count).map {
      Dog(
        id: $0, name: "Dog \($0)", breed: ["Labrador", "Shiba Inu", "Border Collie"][$0 % 3],
        age: $0 % 15, price: 100 + Double($0 % 900))
    })
}

/// Format a number with thousands separators and a fixed number of decimals.
func format(_ value: Double, decimals: Int = 0) -> String {
  let formatter = NumberFormatter()
  formatter.numberStyle = .decimal
  formatter.minimumFractionDigits = decimals
  formatter.maximumFractionDigits = decimals
  formatter.locale = Locale(identifier: "en_US")
  return formatter.string(from: NSNumber(value: value)) ?? "\(value)"
}

/// The median of `values`, with their minimum and maximum: "median (min–max)".
func range(_ values: [Double], decimals: Int = 0) -> String {
  "\(format(median(values), decimals: decimals)) (\(format(values.min() ?? 0, decimals: decimals))–\(format(values.max() ?? 0, decimals: decimals)))"
}
