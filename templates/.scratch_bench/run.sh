set -x
cd templates/.scratch_bench
nvidia-smi topo -m > $OUT/topo.txt 2>&1
nvcc -std=c++17 -O3 -arch=sm_90 -I../include bench.cu -o bench || exit 1
./bench 2>&1 | tee $OUT/bench.txt
cuobjdump -sass bench > $OUT/bench_sm90.sass
nvcc -std=c++17 -arch=sm_90 -I../include -cubin all.cu -o all90.cubin && cuobjdump -sass all90.cubin > $OUT/all_sm90.sass
nvcc -std=c++17 -gencode arch=compute_80,code=sm_80 -I../include -cubin all.cu -o all80.cubin && cuobjdump -sass all80.cubin > $OUT/all_sm80.sass
ls -la $OUT
