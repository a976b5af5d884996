use kernels::compile::compile_family;
use kernels::kernel_family::KernelFamily;
fn main() {
    let dir = std::env::args().nth(1).expect("dir");
    let only = std::env::var("ONLY").unwrap_or_default();
    for family in KernelFamily::ALL.into_iter().filter(|f| only.is_empty() || f.file().contains(only.as_str())) {
        for mutant in [0u32, 10, 11] {
            let c = compile_family(family, "sm_90", mutant).expect("compile");
            std::fs::write(format!("{dir}/{}.{mutant}.cubin", family.file().replace('/', "_")), &c.cubin)
                .expect("write");
        }
    }
}
