import DogPatch
import ErrandStubs
import Foundation

let command: DogPatchCommand
do {
  command = try DogPatchCommand.parse(Array(CommandLine.arguments.dropFirst()))
} catch .help {
  print(DogPatchCommand.usage)
  exit(0)
} catch .message(let message) {
  FileHandle.standardError.write(Data("dogpatch: \(message) (see dogpatch --help)\n".utf8))
  exit(2)
}

let cassette =
  (try? Fixtures.nearest(to: #filePath).url("cassettes/dogpatch.json"))
  ?? URL(fileURLWithPath: "Fixtures/cassettes/dogpatch.json")
if command.watch {
  let succeeded = await command.watch(cassette: cassette) { line in print(line) }
  exit(succeeded ? 0 : 1)
}
let (output, succeeded) = await command.run(cassette: cassette)
if succeeded {
  print(output, terminator: "")
} else {
  FileHandle.standardError.write(Data(output.utf8))
  exit(1)
}
