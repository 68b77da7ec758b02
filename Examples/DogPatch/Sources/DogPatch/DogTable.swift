import Foundation

/// Dogs as a text table, columns aligned.
public enum DogTable {
  /// The table, a header line, a rule and one line per dog.
  /// - Parameter dogs: The dogs.
  /// - Returns: The text, ending with a newline.
  public static func render(_ dogs: [Dog]) -> String {
    let header = ["ID", "Name", "Breed", "Age", "Price"]
    let rows = dogs.map { dog in
      ["\(dog.id)", dog.name, dog.breed, "\(dog.age)", price(dog.price)]
    }
    let widths = header.indices.map { column in
      ([header[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
    }
    func line(_ cells: [String]) -> String {
      cells.enumerated().map { column, cell in
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        return [0, 3, 4].contains(column) ? padding + cell : cell + padding
      }.joined(separator: "  ")
    }
    let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
    return ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
  }

  /// A price as dollars and cents, for example `$1,200.50`.
  static func price(_ amount: Decimal) -> String {
    let cents = NSDecimalNumber(decimal: amount * 100).intValue
    let dollars = String(cents / 100)
    var grouped = ""
    for (offset, digit) in dollars.reversed().enumerated() {
      if offset > 0 && offset % 3 == 0 {
        grouped.append(",")
      }
      grouped.append(digit)
    }
    return "$" + String(grouped.reversed()) + "." + String(format: "%02d", cents % 100)
  }
}
