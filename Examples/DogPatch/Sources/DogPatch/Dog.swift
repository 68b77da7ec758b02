import Foundation

/// A dog for sale at DogPatch.
public struct Dog: Codable, Equatable, Sendable, Identifiable {
  /// The listing's identifier.
  public var id: Int
  /// The dog's name.
  public var name: String
  /// The breed.
  public var breed: String
  /// Age in years.
  public var age: Int
  /// The price in dollars.
  public var price: Decimal

  /// Create a dog.
  public init(id: Int, name: String, breed: String, age: Int, price: Decimal) {
    self.id = id
    self.name = name
    self.breed = breed
    self.age = age
    self.price = price
  }
}

/// The signed-in customer.
public struct Owner: Codable, Equatable, Sendable {
  /// The customer's name.
  public var name: String
  /// The ids of the dogs they like.
  public var favourites: [Int]
}
