//! The filetests (`tests/filetests/**/*.mlir`), run by `testsuite::filetests`.

fn main() {
    testsuite::filetests::main();
}
