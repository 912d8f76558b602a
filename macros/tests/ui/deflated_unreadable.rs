// `deflated!` takes a path relative to the crate's directory: a file it cannot read is an
// error at the path, naming the file and why; anything but a string literal is refused.

fn main() {
    let _ = kapi::deflated!("openapi/no-such-document.json");
    let _ = kapi::deflated!(openapi);
}
