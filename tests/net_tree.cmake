# The trees among node leaders and the model's choice of them (unit test, no
# MPI launch).
add_executable(test_net_tree unit/test_net_tree.c)
target_link_libraries(test_net_tree PRIVATE strata m)
target_include_directories(test_net_tree PRIVATE ${CMAKE_SOURCE_DIR}/src)
add_test(NAME net.tree.unit COMMAND test_net_tree)
