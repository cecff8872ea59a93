// nn::AtomicFile and its neighbours: a save goes through symbolic links to their target, never
// replaces a device, folder, FIFO or socket, and leaves no temporary file; appending grows a file.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "nn/io/AtomicFile.h"
#include "nn/tensor/Error.h"
#include "tests/support/TempDir.h"

namespace fs = std::filesystem;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The names in a folder, for "nothing else was left there".
std::vector<std::string> names(const std::string& folder) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(folder)) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("saving through a symbolic link replaces its target beside it and keeps the link", "[AtomicFile]") {
  nn::test::TempDir dir;
  fs::create_directory(dir.file("real"));
  const std::string target = dir.file("real/model.bin");
  nn::writeFileAtomically(target, "old");
  fs::create_symlink("real/model.bin", dir.file("link.bin"));       // relative, as `ln -s` makes them
  fs::create_symlink(dir.file("link.bin"), dir.file("link2.bin"));  // a link to a link
  nn::writeFileAtomically(dir.file("link2.bin"), "new");
  CHECK(fs::is_symlink(dir.file("link.bin")));
  CHECK(fs::is_symlink(dir.file("link2.bin")));
  CHECK(read(target) == "new");
  CHECK(names(dir.file("real")) == std::vector<std::string>{"model.bin"});
  // A link whose target does not exist yet: the target is created.
  fs::create_symlink("real/fresh.bin", dir.file("dangling.bin"));
  nn::writeFileAtomically(dir.file("dangling.bin"), "fresh");
  CHECK(read(dir.file("real/fresh.bin")) == "fresh");
  CHECK(fs::is_symlink(dir.file("dangling.bin")));
}

TEST_CASE("a save refuses a folder, a FIFO, a socket and a device, and changes nothing", "[AtomicFile]") {
  nn::test::TempDir dir;
  fs::create_directory(dir.file("folder"));
  REQUIRE(mkfifo(dir.file("fifo").c_str(), 0600) == 0);
  const int s = socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(s >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Socket paths are short (108 bytes): this one lives in a folder of its own under /tmp.
  char shortFolder[] = "/tmp/nn.XXXXXX";
  REQUIRE(mkdtemp(shortFolder) != nullptr);
  const std::string socketPath = std::string(shortFolder) + "/socket";
  REQUIRE(socketPath.size() < sizeof(address.sun_path));
  std::strcpy(address.sun_path, socketPath.c_str());
  REQUIRE(bind(s, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
  fs::create_symlink("fifo", dir.file("to-fifo"));
  fs::create_symlink("/dev/null", dir.file("to-null"));
  const std::vector<std::string> before = names(dir.path());
  CHECK_THROWS_WITH(nn::writeFileAtomically(dir.file("folder"), "x"), Catch::Contains("it is a folder"));
  CHECK_THROWS_WITH(nn::writeFileAtomically(dir.file("fifo"), "x"),
                    Catch::Contains("it is a FIFO, not a regular file"));
  CHECK_THROWS_WITH(nn::writeFileAtomically(socketPath, "x"), Catch::Contains("it is a socket"));
  CHECK_THROWS_WITH(nn::writeFileAtomically(dir.file("to-fifo"), "x"),
                    Catch::Contains("it links to " + dir.file("fifo") + ", which is a FIFO"));
  // A character device, through a link (the test may run as root: the device must survive).
  CHECK_THROWS_WITH(nn::writeFileAtomically(dir.file("to-null"), "x"), Catch::Contains("a character device"));
  CHECK(fs::is_character_file("/dev/null"));
  CHECK_THROWS_WITH(nn::checkWritable(dir.file("fifo")), Catch::Contains("a FIFO"));
  close(s);
  CHECK(fs::is_socket(socketPath));
  CHECK(names(shortFolder) == std::vector<std::string>{"socket"});
  fs::remove_all(shortFolder);
  CHECK(fs::is_fifo(dir.file("fifo")));
  CHECK(fs::is_directory(dir.file("folder")));
  CHECK(names(dir.path()) == before);  // no temporary file left behind
}

TEST_CASE("checkWritable refuses what a save would fail on, before any work", "[AtomicFile]") {
  nn::test::TempDir dir;
  CHECK_NOTHROW(nn::checkWritable(dir.file("new.bin")));
  CHECK_THROWS_WITH(nn::checkWritable(dir.file("missing/new.bin")), Catch::Contains("missing"));
  CHECK_THROWS_WITH(nn::checkWritable(dir.path() + "/"), Catch::Contains("expected a file path"));
  fs::create_directory(dir.file("folder"));
  CHECK_THROWS_WITH(nn::checkWritable(dir.file("folder")), Catch::Contains("it is a folder"));
  if (geteuid() != 0) {  // root writes into read-only folders
    fs::create_directory(dir.file("locked"));
    fs::permissions(dir.file("locked"), fs::perms::owner_read | fs::perms::owner_exec);
    CHECK_THROWS_WITH(nn::checkWritable(dir.file("locked/new.bin")), Catch::Contains("not writable"));
  }
}

TEST_CASE("appendToFile grows a file line by line, also through a link", "[AtomicFile]") {
  nn::test::TempDir dir;
  nn::appendToFile(dir.file("log"), "one\n");
  nn::appendToFile(dir.file("log"), "two\n");
  fs::create_symlink("log", dir.file("link"));
  nn::appendToFile(dir.file("link"), "three\n");
  CHECK(read(dir.file("log")) == "one\ntwo\nthree\n");
  CHECK(fs::is_symlink(dir.file("link")));
  CHECK_THROWS_WITH(nn::appendToFile(dir.file("missing/log"), "x"), Catch::Contains("cannot open to append"));
}
